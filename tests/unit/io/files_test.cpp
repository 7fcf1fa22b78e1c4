#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/io/files.h"

using namespace zerofarm;

TEST_CASE("text files: written atomically, read back whole", "[io]") {
  testing::ScratchDir dir("zf-files");
  const std::string path = dir / "state.txt";
  io::WriteTextFileAtomically(path, "version=3\nstep=10\n");
  CHECK(io::ReadTextFile(path) == "version=3\nstep=10\n");
  io::WriteTextFileAtomically(path, "version=4\n");
  CHECK(io::ReadTextFile(path) == "version=4\n");
  CHECK_THROWS_AS(io::ReadTextFile(dir / "missing.txt"), Error);
}

TEST_CASE("CSV rows: the header is written once, and grows when columns are added at the end", "[io]") {
  testing::ScratchDir dir("zf-files");
  const std::string path = dir / "curve.csv";
  io::AppendCsvRow(path, "hours,error", "0.5,0.3");
  io::AppendCsvRow(path, "hours,error", "1.0,0.2");
  CHECK(io::ReadTextFile(path) == "hours,error\n0.5,0.3\n1.0,0.2\n");
  // A newer program adds a column: old rows keep their fields, the header names all.
  io::AppendCsvRow(path, "hours,error,outcome_error", "1.5,0.1,0.05");
  CHECK(io::ReadTextFile(path) == "hours,error,outcome_error\n0.5,0.3\n1.0,0.2\n1.5,0.1,0.05\n");
  // A file of other columns is not appended to.
  CHECK_THROWS_AS(io::AppendCsvRow(path, "hours,elo", "2.0,100"), Error);
  CHECK_THROWS_AS(io::AppendCsvRow(path, "hours,errors_total", "2.0,1"), Error);
  CHECK(io::ReadTextFile(path) == "hours,error,outcome_error\n0.5,0.3\n1.0,0.2\n1.5,0.1,0.05\n");
}
