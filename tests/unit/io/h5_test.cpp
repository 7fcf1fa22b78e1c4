// H5Handle and the HDF5 helpers (src/io/h5.cpp).
#include "zerofarm/io/h5.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "test_paths.h"

namespace zerofarm::io {
namespace {

using testing::ScratchDir;

TEST_CASE("H5Handle owns one id and moves", "[io]") {
  ScratchDir dir("zf-io");
  H5File file = CreateFile(dir / "a.h5");
  REQUIRE(file.valid());
  const hid_t id = file.id();

  H5File moved(std::move(file));
  CHECK_FALSE(file.valid());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  CHECK(file.id() < 0);
  CHECK(moved.id() == id);

  H5File assigned;
  assigned = std::move(moved);
  CHECK_FALSE(moved.valid());                                // NOLINT(bugprone-use-after-move)
  WriteScalarAttr<int32_t>(assigned.id(), "still_open", 7);  // the id still works
  CHECK(ReadScalarAttr<int32_t>(assigned.id(), "still_open") == 7);
  assigned.CloseChecked("close a.h5");
  CHECK_FALSE(assigned.valid());
}

TEST_CASE("H5Handle throws naming the operation for an invalid id", "[io]") {
  try {
    H5Dataset d(-1, "x.h5: open dataset /positions/z");
    FAIL("no throw");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("x.h5: open dataset /positions/z failed") == 0);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("attributes round trip", "[io]") {
  ScratchDir dir("zf-io");
  const std::string path = dir / "attrs.h5";
  {
    H5File f = CreateFile(path);
    WriteScalarAttr<int32_t>(f.id(), "i32", -5);
    WriteScalarAttr<uint32_t>(f.id(), "u32", 4000000000u);
    WriteScalarAttr<int64_t>(f.id(), "i64", -(int64_t{1} << 40));
    WriteScalarAttr<uint64_t>(f.id(), "u64", ~uint64_t{0});
    WriteScalarAttr<float>(f.id(), "f", 1.5f);
    WriteScalarAttr<double>(f.id(), "d", 0.1);
    WriteScalarAttr<int32_t>(f.id(), "replaced", 1);
    WriteScalarAttr<int32_t>(f.id(), "replaced", 2);
    WriteArrayAttr<uint64_t>(f.id(), "arr", {1, 2, 3});
    WriteArrayAttr<uint64_t>(f.id(), "empty_arr", {});
    WriteStringAttr(f.id(), "s", "hello, wörld");
    WriteStringAttr(f.id(), "empty_s", "");
    WriteStringArrayAttr(f.id(), "names", {"stones_to_move", "stones_other", "ones"});
  }
  H5File f = OpenFile(path);
  CHECK(ReadScalarAttr<int32_t>(f.id(), "i32") == -5);
  CHECK(ReadScalarAttr<uint32_t>(f.id(), "u32") == 4000000000u);
  CHECK(ReadScalarAttr<int64_t>(f.id(), "i64") == -(int64_t{1} << 40));
  CHECK(ReadScalarAttr<uint64_t>(f.id(), "u64") == ~uint64_t{0});
  CHECK(ReadScalarAttr<int64_t>(f.id(), "i32") == -5);  // converts between integer types
  CHECK(ReadScalarAttr<float>(f.id(), "f") == 1.5f);
  CHECK(ReadScalarAttr<double>(f.id(), "d") == 0.1);
  CHECK(ReadScalarAttr<int32_t>(f.id(), "replaced") == 2);
  CHECK(ReadArrayAttr<uint64_t>(f.id(), "arr") == std::vector<uint64_t>{1, 2, 3});
  CHECK(ReadArrayAttr<uint64_t>(f.id(), "empty_arr").empty());
  CHECK(ReadStringAttr(f.id(), "s") == "hello, wörld");
  CHECK(ReadStringAttr(f.id(), "empty_s").empty());
  CHECK(ReadStringArrayAttr(f.id(), "names") ==
        std::vector<std::string>{"stones_to_move", "stones_other", "ones"});
  CHECK(ReadStringArrayAttr(f.id(), "s") == std::vector<std::string>{"hello, wörld"});
  CHECK(HasAttr(f.id(), "i32"));
  CHECK_FALSE(HasAttr(f.id(), "nope"));
  CHECK_THROWS_WITH(ReadStringAttr(f.id(), "i32"), Catch::Contains("is not a string"));
  CHECK_THROWS_WITH(ReadScalarAttr<int32_t>(f.id(), "s"), Catch::Contains("is not numeric"));
  CHECK_THROWS_WITH(ReadScalarAttr<int32_t>(f.id(), "arr"), Catch::Contains("not a single value"));
  CHECK_THROWS_WITH(ReadScalarAttr<int32_t>(f.id(), "nope"),
                    Catch::StartsWith(path + ": /: open attribute nope failed: "));
}

template <typename T>
std::vector<T> Ramp(size_t n, T scale) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<T>(i % 97) * scale);
  return v;
}

TEST_CASE("datasets round trip, chunked and plain", "[io]") {
  ScratchDir dir("zf-io");
  const std::string path = dir / "data.h5";
  // Small chunks, so the data spans several chunks and the last one is partial;
  // compressed by 3 threads (H5Dwrite_chunk) or by HDF5's own pipeline.
  const Compression small_chunks{1, true, 256, 8, 3};
  const Compression serial{1, true, 256, 8, 1};
  const Compression plain{0, false};
  const auto u8 = Ramp<uint8_t>(1000 * 6, 1);
  const auto i16 = Ramp<int16_t>(333, -3);
  const auto i32 = Ramp<int32_t>(1001, 100000);
  const auto u32 = Ramp<uint32_t>(77, 40000000u);
  const auto i64 = Ramp<int64_t>(500, -(int64_t{1} << 40));
  const auto u64 = Ramp<uint64_t>(500, uint64_t{1} << 50);
  const auto f32 = Ramp<float>(1000 * 9, 0.37f);
  const auto i8 = Ramp<int8_t>(50, -1);
  {
    H5File f = CreateFile(path);
    H5Group g = CreateGroup(f.id(), "grp");
    WriteDataset<uint8_t>(g.id(), "u8", u8.data(), {1000, 2, 3}, small_chunks);
    WriteDataset(g.id(), "i16", i16, small_chunks);
    WriteDataset(g.id(), "i32", i32, plain);
    WriteDataset(g.id(), "u32", u32, Compression{9});
    WriteDataset(g.id(), "i64", i64, small_chunks);
    WriteDataset(g.id(), "u64", u64, small_chunks);
    WriteDataset<float>(g.id(), "f32", f32.data(), {1000, 9}, small_chunks);
    WriteDataset(g.id(), "i8", i8, small_chunks);
    WriteDataset(g.id(), "i64_serial", i64, serial);
    WriteDataset<float>(g.id(), "f32_serial", f32.data(), {1000, 9}, serial);
    WriteDataset(g.id(), "empty", std::vector<float>{}, small_chunks);
    const float scalar = 2.5f;
    WriteDataset<float>(g.id(), "scalar", &scalar, {}, plain);
    CHECK_THROWS_AS(WriteDataset(g.id(), "bad", i16, Compression{10}), ConfigError);
  }
  H5File f = OpenFile(path);
  H5Group g = OpenGroup(f.id(), "grp");
  std::vector<uint64_t> dims;
  CHECK(ReadDataset<uint8_t>(g.id(), "u8", &dims) == u8);
  CHECK(dims == std::vector<uint64_t>{1000, 2, 3});
  CHECK(ReadDataset<int16_t>(g.id(), "i16") == i16);
  CHECK(ReadDataset<int32_t>(g.id(), "i32") == i32);
  CHECK(ReadDataset<uint32_t>(g.id(), "u32") == u32);
  CHECK(ReadDataset<int64_t>(g.id(), "i64") == i64);
  CHECK(ReadDataset<uint64_t>(g.id(), "u64") == u64);
  CHECK(ReadDataset<float>(g.id(), "f32", &dims) == f32);
  CHECK(dims == std::vector<uint64_t>{1000, 9});
  CHECK(ReadDataset<int8_t>(g.id(), "i8") == i8);
  CHECK(ReadDataset<int64_t>(g.id(), "i64_serial") == i64);
  CHECK(ReadDataset<float>(g.id(), "f32_serial") == f32);
  CHECK(ReadDataset<float>(g.id(), "empty", &dims).empty());
  CHECK(dims == std::vector<uint64_t>{0});
  CHECK(ReadDataset<float>(g.id(), "scalar", &dims) == std::vector<float>{2.5f});
  CHECK(dims.empty());
  CHECK(ReadDataset<int64_t>(g.id(), "i16") == std::vector<int64_t>(i16.begin(), i16.end()));
  CHECK(DatasetDims(g.id(), "f32") == std::vector<uint64_t>{1000, 9});
  CHECK(IsDataset(f.id(), "grp/f32"));
  CHECK_FALSE(IsDataset(f.id(), "grp"));
  CHECK_FALSE(IsDataset(f.id(), "grp/nope"));
  CHECK(IsIntegerDataset(g.id(), "u8"));
  CHECK_FALSE(IsIntegerDataset(g.id(), "f32"));
  CHECK(HasLink(f.id(), "grp/i8"));
  CHECK_FALSE(HasLink(f.id(), "nope/i8"));
  CHECK(ListLinks(g.id()) == std::vector<std::string>{"u8", "i16", "i32", "u32", "i64", "u64", "f32", "i8",
                                                      "i64_serial", "f32_serial", "empty", "scalar"});

  std::vector<float> rows(3 * 9);
  ReadRows(g.id(), "f32", 996, 3, rows.data());
  CHECK(rows == std::vector<float>(f32.begin() + 996 * 9, f32.begin() + 999 * 9));
  CHECK_THROWS_WITH(ReadRows(g.id(), "f32", 998, 3, rows.data()),
                    Catch::Contains("/grp/f32: rows [998, 1001) out of range (1000 rows)"));
  CHECK_THROWS_WITH(ReadDataset<float>(g.id(), "missing"),
                    Catch::StartsWith(path + ": /grp/missing: open dataset failed: "));
}

TEST_CASE("DeleteLink removes one link and names what it could not remove", "[io]") {
  ScratchDir dir("zf-io");
  const std::string path = dir / "links.h5";
  {
    H5File f = CreateFile(path);
    H5Group g = CreateGroup(f.id(), "grp");
    WriteDataset(g.id(), "a", std::vector<int32_t>{1, 2});
    WriteDataset(g.id(), "b", std::vector<int32_t>{3});
    DeleteLink(f.id(), "grp/a");
    CHECK(ListLinks(g.id()) == std::vector<std::string>{"b"});
    CHECK_THROWS_WITH(DeleteLink(f.id(), "grp/a"), Catch::StartsWith(path + ": /grp/a: delete link failed"));
  }
  H5File f = OpenFile(path);
  CHECK_THROWS_WITH(DeleteLink(f.id(), "grp/b"), Catch::StartsWith(path + ": /grp/b: delete link failed"));
  CHECK(ReadDataset<int32_t>(f.id(), "grp/b") == std::vector<int32_t>{3});
}

TEST_CASE("HDF5 failures are one-line errors naming the file", "[io]") {
  ScratchDir dir("zf-io");
  const std::string missing = dir / "missing.h5";
  CHECK_FALSE(IsHdf5File(missing));
  CHECK_THROWS_WITH(OpenFile(missing), missing + ": open failed: No such file or directory");
  CHECK_THROWS_WITH(CreateFile(dir / "no/such/dir.h5"),
                    dir / "no/such/dir.h5" + ": create failed: No such file or directory");
}

TEST_CASE("a full disk raises NoSpaceError", "[io]") {
  ScratchDir dir("zf-io");
  const std::string path = dir / "full.h5";
  REQUIRE(::symlink("/dev/full", path.c_str()) == 0);  // every write fails with ENOSPC
  const std::vector<float> data(1 << 20, 1.0f);
  auto write = [&] {
    H5File f = CreateFile(path);
    WriteDataset(f.id(), "x", data, Compression{0});
    f.CloseChecked(path + ": close");
  };
  CHECK_THROWS_AS(write(), NoSpaceError);
  CHECK_THROWS_WITH(write(), Catch::Contains("No space left on device"));
}

}  // namespace
}  // namespace zerofarm::io
