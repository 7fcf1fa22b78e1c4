// What the farm does with a file that crashed the HDF5 checker (io/h5_check.h):
// the verdict told apart, the file set aside under a free name, never over one.
// The checker process itself runs in the fault tests (tests/fault/bad_input_test.cpp).
#include "zerofarm/io/h5_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"

namespace zerofarm::io {
namespace {

using testing::ScratchDir;

using testing::Slurp;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

TEST_CASE("VerdictIsCrash tells a crash of the checker from a file that is no shard", "[io]") {
  const std::string crash =
      "/r/s.h5: refused: reading it crashed libhdf5 (killed by signal 11 (Segmentation "
      "fault)); a damaged or hostile file";
  CHECK(VerdictIsCrash("/r/s.h5", crash));
  CHECK_FALSE(VerdictIsCrash("/r/t.h5", crash));  // another file's crash
  CHECK_FALSE(VerdictIsCrash("/r/s.h5", "/r/s.h5: not an HDF5 file or truncated"));
  CHECK_FALSE(VerdictIsCrash("/r/s.h5", ""));
  CHECK_FALSE(VerdictIsCrash("/r/s.h5: refused: reading it crashed libhdf5 (", "/r/s.h5"));
}

TEST_CASE("SetAside keeps a refused file under a free name, never over another, never through a link",
          "[io]") {
  ScratchDir dir("zf-aside");
  const std::string shard = dir / "shard-000003.h5";
  std::ofstream(shard) << "first";
  CHECK(SetAside(shard) == shard + ".refused");
  CHECK_FALSE(Exists(shard));
  CHECK(Slurp(shard + ".refused") == "first");
  // The same name again: the next free one; the first stays as it was.
  std::ofstream(shard) << "second";
  CHECK(SetAside(shard) == shard + ".refused.2");
  CHECK(Slurp(shard + ".refused") == "first");
  CHECK(Slurp(shard + ".refused.2") == "second");
  // A link planted at the next name is neither replaced nor followed.
  std::ofstream(dir / "elsewhere") << "not ours";
  REQUIRE(::symlink((dir / "elsewhere").c_str(), (shard + ".refused.3").c_str()) == 0);
  std::ofstream(shard) << "third";
  CHECK(SetAside(shard) == shard + ".refused.4");
  CHECK(Slurp(dir / "elsewhere") == "not ours");
  CHECK(Slurp(shard + ".refused.4") == "third");
  // A link to set aside is renamed itself: its target stays.
  REQUIRE(::symlink((dir / "elsewhere").c_str(), (dir / "link.h5").c_str()) == 0);
  CHECK(SetAside(dir / "link.h5") == dir / "link.h5.refused");
  CHECK(Slurp(dir / "elsewhere") == "not ours");
  CHECK_THROWS_WITH(SetAside(dir / "missing.h5"),
                    Catch::Contains("missing.h5") && Catch::Contains("No such file"));
}

TEST_CASE("CheckOwnFiles without a checker (this test binary) reads nothing and moves nothing", "[io]") {
  ScratchDir dir("zf-aside");
  std::ofstream(dir / "a.h5") << "not HDF5";
  REQUIRE_FALSE(H5CheckerSet());
  CHECK(CheckOwnFiles(H5CheckKind::kShard, {dir / "a.h5"}) == std::vector<std::string>{""});
  CHECK(Exists(dir / "a.h5"));
  CHECK(CheckOwnFiles(H5CheckKind::kShardMeta, {}).empty());
}

}  // namespace
}  // namespace zerofarm::io
