"""Follows a run's shard manifests (RUN/shards/HOST/manifest, written by each
host's writer; docs/schema.md, io/shard_manifest.h) without listing old shards.

    follower = ShardFollower(RUN)
    new = follower.new_shards()   # paths not returned before, sorted

A host's new shards come from its manifest, read from the last offset: only
complete lines (a torn last line waits for the writer's repair). A host
without a manifest (a run from before manifests), or whose manifest has a
damaged line, is listed instead; RUN/shards/*.h5 (a run from before hosts)
too. A listed shard that is not there is skipped. Nothing is returned twice.
``follower.from_manifest``: the paths of the last call that a manifest listed.
Standard library only.
"""

import os
import re
import sys

MANIFEST = "manifest"
_LINE = re.compile(r"^([^/ .][^/ ]*) ([0-9]{1,18}) ([0-9]{1,18})$")


def parse_line(line):
    """(name, positions, games) of a manifest line (no newline), or None."""
    m = _LINE.match(line) if len(line) <= 128 else None
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def _listed(directory):
    try:
        return [e.name for e in os.scandir(directory)
                if e.name.endswith(".h5") and not e.name.startswith(".") and e.is_file(follow_symlinks=False)]
    except OSError:
        return []


class ShardFollower:
    """New shards of a run (or of a RUN/shards directory) at each call."""

    def __init__(self, run):
        shards = os.path.join(run, "shards")
        self.shards_dir = shards if os.path.isdir(shards) else run
        self._offset, self._returned, self._broken = {}, {}, set()
        self.manifest_hosts = self.listed_hosts = 0
        self.from_manifest = set()  # the paths of the last call read from a manifest

    def _from_manifest(self, host, path):
        with open(path, "rb") as f:
            f.seek(self._offset.get(host, 0))
            data = f.read()
        end = data.rfind(b"\n") + 1  # a torn tail stays unread
        names = []
        for line in data[:end].decode("utf-8", "replace").splitlines():
            entry = parse_line(line)
            if entry is None:
                raise ValueError(f"{path}: a damaged line {line[:40]!r}")
            names.append(entry[0])
        self._offset[host] = self._offset.get(host, 0) + end
        return names

    def _host(self, host):
        directory = os.path.join(self.shards_dir, host)
        manifest = os.path.join(directory, MANIFEST)
        names, listed = None, False
        if host not in self._broken and os.path.isfile(manifest) and not os.path.islink(manifest):
            try:
                names = self._from_manifest(host, manifest)
                self.manifest_hosts += 1
            except (OSError, ValueError) as e:
                print(f"zf_manifest: {e}; listing {directory} instead", file=sys.stderr)
                self._broken.add(host)
        if names is None:
            names, listed = _listed(directory), True
            self.listed_hosts += 1
        seen = self._returned.setdefault(host, set())
        out = []
        for name in names:
            path = os.path.join(directory, name)
            if name not in seen and os.path.isfile(path) and not os.path.islink(path):
                seen.add(name)
                out.append(path)
                if not listed:
                    self.from_manifest.add(path)
        return out

    def new_shards(self):
        """Sorted paths of the shards not returned by an earlier call."""
        self.manifest_hosts = self.listed_hosts = 0
        self.from_manifest = set()
        out = []
        try:
            entries = list(os.scandir(self.shards_dir))
        except OSError:
            return out
        top = self._returned.setdefault("", set())
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                out += self._host(e.name)
            elif e.name.endswith(".h5") and not e.name.startswith(".") and e.is_file(follow_symlinks=False):
                if e.name not in top:
                    top.add(e.name)
                    out.append(e.path)
        return sorted(out)
