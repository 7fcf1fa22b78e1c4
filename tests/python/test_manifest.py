"""tools/zf_manifest.py: a run's shards from its hosts' manifests, by offset,
with a listing for hosts without one (or with a damaged one)."""

import os
import tempfile
import unittest

import test_support  # noqa: F401  (puts tools/ on sys.path)
import zf_manifest


def touch(path):
    open(path, "wb").close()


class ShardFollowerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="zf-manifest-py-")
        self.shards = os.path.join(self.tmp.name, "shards")
        self.a, self.b = os.path.join(self.shards, "a"), os.path.join(self.shards, "b")
        os.makedirs(self.a)
        os.makedirs(self.b)

    def tearDown(self):
        self.tmp.cleanup()

    def append(self, host_dir, text):
        with open(os.path.join(host_dir, "manifest"), "a") as f:
            f.write(text)

    def test_incremental_torn_fallback_and_damage(self):
        for i in range(2):
            touch(os.path.join(self.a, f"shard-{i:06d}.h5"))
        self.append(self.a, "shard-000000.h5 80 4\nshard-000001.h5 80 4\n")
        touch(os.path.join(self.b, "shard-000000.h5"))  # host b: no manifest
        f = zf_manifest.ShardFollower(self.tmp.name)
        self.assertEqual([os.path.relpath(p, self.shards) for p in f.new_shards()],
                         ["a/shard-000000.h5", "a/shard-000001.h5", "b/shard-000000.h5"])
        self.assertEqual((f.manifest_hosts, f.listed_hosts), (1, 1))
        self.assertEqual(f.new_shards(), [])
        # Renamed, not yet listed: not returned; a torn line waits; then the repair.
        touch(os.path.join(self.a, "shard-000002.h5"))
        self.append(self.a, "shard-000002.h5 8")
        self.assertEqual(f.new_shards(), [])
        self.append(self.a, "0 4\nshard-000009.h5 1 1\n")  # 9: listed, not there
        self.assertEqual(f.new_shards(), [os.path.join(self.a, "shard-000002.h5")])
        # A damaged line: host a is listed from then on, nothing twice.
        touch(os.path.join(self.a, "shard-000003.h5"))
        self.append(self.a, "../../etc/passwd 1 1\n")
        self.assertEqual(f.new_shards(), [os.path.join(self.a, "shard-000003.h5")])
        self.assertEqual(f.listed_hosts, 2)
        self.assertEqual(f.new_shards(), [])

    def test_parse_line(self):
        self.assertEqual(zf_manifest.parse_line("shard-000001.h5 16384 40"), ("shard-000001.h5", 16384, 40))
        for bad in ("shard-000001.h5 16384", ".x.h5 1 1", "a/b.h5 1 1", "shard.h5 -1 1", "shard.h5 1 1 "):
            self.assertIsNone(zf_manifest.parse_line(bad), bad)


if __name__ == "__main__":
    unittest.main()
