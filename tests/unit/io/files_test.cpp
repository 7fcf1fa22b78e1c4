#include "zerofarm/io/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/io/safe_files.h"

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

TEST_CASE("CSV rows split into every field written, empty ones kept", "[io]") {
  using V = std::vector<std::string>;
  CHECK(io::SplitFields("hours,error") == V{"hours", "error"});
  CHECK(io::SplitFields("1.0,,0.2,") == V{"1.0", "", "0.2", ""});  // getline would drop the last
  CHECK(io::SplitFields("") == V{""});
  CHECK(io::SplitFields(",") == V{"", ""});
  CHECK(io::SplitFields("a b  c", ' ') == V{"a", "b", "", "c"});
  // A row read back from AppendCsvRow's file has as many fields as its header.
  testing::ScratchDir dir("zf-files");
  const std::string path = dir / "curve.csv";
  io::AppendCsvRow(path, "hours,note,error", "0.5,,0.3");
  const std::vector<std::string> lines = io::SplitFields(io::ReadTextFile(path), '\n');
  REQUIRE(lines == V{"hours,note,error", "0.5,,0.3", ""});  // the empty rest after the last newline
  CHECK(io::SplitFields(lines[1]).size() == io::SplitFields(lines[0]).size());
}

// ---- issue 21: files of a run never followed through a link -------------------------

TEST_CASE("files of a run are created fresh and never written through a planted link", "[io]") {
  testing::ScratchDir dir("zf-files");
  const std::string victim = dir / "victim", link = dir / "run-file";
  std::ofstream(victim) << "precious\n";
  REQUIRE(::symlink(victim.c_str(), link.c_str()) == 0);
  // An atomic write whose .tmp name is a planted link replaces the link, not its target.
  REQUIRE(::symlink(victim.c_str(), (link + ".tmp").c_str()) == 0);
  io::WriteTextFileAtomically(link, "mine\n");
  CHECK(io::ReadTextFile(victim) == "precious\n");
  CHECK(io::ReadTextFile(link) == "mine\n");
  CHECK_FALSE(std::filesystem::is_symlink(link));
  // A fresh file over a link: the link goes, the target stays.
  const std::string link2 = dir / "metrics.csv";
  REQUIRE(::symlink(victim.c_str(), link2.c_str()) == 0);
  std::FILE* f = io::OpenFreshStream(link2);
  REQUIRE(f);
  std::fputs("a,b\n", f);
  std::fclose(f);
  CHECK(io::ReadTextFile(victim) == "precious\n");
  CHECK(io::ReadTextFile(link2) == "a,b\n");
  // Appending and reading refuse a link.
  const std::string link3 = dir / "curve.csv";
  REQUIRE(::symlink(victim.c_str(), link3.c_str()) == 0);
  CHECK_THROWS_AS(io::AppendCsvRow(link3, "a,b", "1,2"), ConfigError);
  CHECK_THROWS_WITH(io::ReadRunFile(link3), link3 + ": a symbolic link; refusing to follow it");
  CHECK(io::ReadTextFile(victim) == "precious\n");
  CHECK(io::OpenRunFile(link3, O_RDWR | O_CREAT) == -1);
  CHECK(errno == ELOOP);
  // A FIFO is never opened (it would block), a hard link never written.
  const std::string fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(io::OpenRunFile(fifo, O_RDONLY) == -1);
  CHECK(errno == EINVAL);
  const std::string hard = dir / "hard";
  REQUIRE(::link(victim.c_str(), hard.c_str()) == 0);
  CHECK(io::OpenRunFile(hard, O_WRONLY) == -1);
  CHECK_FALSE(io::ReadRunFile(dir / "missing").has_value());
}

TEST_CASE("a directory of the run must be this user's and closed to group and others", "[io]") {
  testing::ScratchDir dir("zf-files");
  const std::string run = dir / "run";
  io::MakeRunDirectory(run, false);
  struct stat st;
  REQUIRE(::stat(run.c_str(), &st) == 0);
  CHECK((st.st_mode & 022) == 0);  // 0755 less the umask: never group- or other-writable
  CHECK_NOTHROW(io::CheckOwnDirectory(run, false));
  ::chmod(run.c_str(), 0775);
  CHECK_THROWS_AS(io::CheckOwnDirectory(run, false), ConfigError);
  CHECK_THROWS_WITH(
      io::CheckOwnDirectory(run, false),
      run + " is writable by its group; refusing to write into it (--allow-foreign-dir to use it anyway)");
  ::chmod(run.c_str(), 0757);
  CHECK_THROWS_WITH(io::CheckOwnDirectory(run, false), Catch::Contains("is writable by others"));
  CHECK_NOTHROW(io::CheckOwnDirectory(run, true));
  // The user's own link to a directory is followed; a file is not a directory.
  ::chmod(run.c_str(), 0755);
  REQUIRE(::symlink(run.c_str(), (dir / "alias").c_str()) == 0);
  CHECK_NOTHROW(io::CheckOwnDirectory(dir / "alias", false));
  std::ofstream(dir / "file") << "x";
  CHECK_THROWS_WITH(io::CheckOwnDirectory(dir / "file", false), dir / "file" + " is not a directory");
}

// Issue 82, point 4: the plugins' and models' rules hold all the way up.
TEST_CASE("a code file under a directory others may write into without the sticky bit is refused",
          "[io][plugin]") {
  testing::ScratchDir dir("zf-files");
  const std::string open = dir / "open", sticky = dir / "sticky", deep = dir / "open/deep";
  for (const std::string& d : {open, sticky, deep}) REQUIRE(::mkdir(d.c_str(), 0755) == 0);
  REQUIRE(::chmod(open.c_str(), 0777) == 0);     // mkdir's mode is masked by the umask
  REQUIRE(::chmod(sticky.c_str(), 01777) == 0);  // as /tmp is
  for (const std::string& d : {open, sticky, deep}) std::ofstream(d + "/code.so") << "x";
  CHECK_NOTHROW(::close(io::OpenOwnCodeFile(sticky + "/code.so")));
  CHECK_THROWS_AS(io::OpenOwnCodeFile(open + "/code.so"), ConfigError);
  CHECK_THROWS_WITH(io::OpenOwnCodeFile(open + "/code.so"),
                    open + "/code.so: its directory " + open +
                        " is writable by others without the sticky bit, so anyone there could replace it "
                        "(chmod go-w or +t " +
                        open + "); refusing to run its code");
  // A directory further up counts as much as the file's own.
  CHECK_THROWS_WITH(io::OpenOwnCodeFile(deep + "/code.so"), Catch::Contains("its directory " + open + " is"));
  REQUIRE(::chmod(open.c_str(), 0775) == 0);
  // Group write in root's group (gid 0) or the owner's private group lets no one else in.
  REQUIRE(::chown(open.c_str(), static_cast<uid_t>(-1), 0) == 0);
  CHECK_NOTHROW(::close(io::OpenOwnCodeFile(deep + "/code.so")));
  // A shared group (users, gid 100 on Debian) does.
  REQUIRE(::chown(open.c_str(), static_cast<uid_t>(-1), 100) == 0);
  CHECK_THROWS_WITH(io::OpenOwnCodeFile(deep + "/code.so"),
                    Catch::Contains(open + " is writable by its group"));
  REQUIRE(::chmod(open.c_str(), 0755) == 0);
  CHECK_NOTHROW(::close(io::OpenOwnCodeFile(deep + "/code.so")));
  // Through a link: the refusal names the file the link leads to.
  REQUIRE(::chmod(open.c_str(), 0777) == 0);
  REQUIRE(::symlink((open + "/code.so").c_str(), (dir / "link.so").c_str()) == 0);
  CHECK_THROWS_WITH(
      io::OpenOwnCodeFile(dir / "link.so"),
      Catch::StartsWith(dir / "link.so" + " (a link to " + open + "/code.so): its directory " + open));
  // A link in an open directory could be swapped itself, whatever it leads to.
  REQUIRE(::symlink((sticky + "/code.so").c_str(), (open + "/to-sticky.so").c_str()) == 0);
  CHECK_THROWS_WITH(
      io::OpenOwnCodeFile(open + "/to-sticky.so"),
      Catch::StartsWith(open + "/to-sticky.so (a link to " + sticky + "/code.so): its directory " + open));
  // The file's own mode, named through the link too.
  REQUIRE(::chmod((sticky + "/code.so").c_str(), 0666) == 0);
  REQUIRE(::symlink((sticky + "/code.so").c_str(), (dir / "writable.so").c_str()) == 0);
  CHECK_THROWS_WITH(io::OpenOwnCodeFile(dir / "writable.so"),
                    dir / "writable.so" + " (a link to " + sticky +
                        "/code.so) is writable by others (chmod go-w it); refusing to run its code");
  ::chmod(open.c_str(), 0755);  // so the scratch directory can be removed
}
