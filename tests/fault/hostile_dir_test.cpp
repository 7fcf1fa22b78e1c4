// A run directory planted by another user (issue 21, point 1): as root,
// `zerofarm run --out DIR` where the unprivileged user `nobody` made DIR and
// planted symbolic links to files outside it must truncate or replace nothing
// outside DIR. Real processes, a real farm; only the parent asserts.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>

#include "farm_check.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/core/exit_codes.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {

constexpr uid_t kNobody = 65534;  // nobody / nogroup on Debian

// Runs `body` in a child process as nobody:nogroup; true when it returned true.
bool AsNobody(const std::function<bool()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    const bool ok = setgroups(0, nullptr) == 0 && setgid(kNobody) == 0 && setuid(kNobody) == 0 && body();
    _exit(ok ? 0 : 1);
  }
  int st = 0;
  return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

// Files outside the run directory that the planted links point at.
class Victims {
 public:
  explicit Victims(const std::string& dir) : dir_(dir) { std::filesystem::create_directories(dir); }
  std::string Make(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "victim " << name << "\n";
    names_.push_back(name);
    return path;
  }
  // Every victim still holds exactly what it was made with.
  std::vector<std::string> Changed() const {
    std::vector<std::string> out;
    for (const auto& n : names_)
      if (Slurp(dir_ + "/" + n) != "victim " + n + "\n") out.push_back(n);
    return out;
  }

 private:
  std::string dir_;
  std::vector<std::string> names_;
};

// A world-writable sticky directory (like /tmp) under `base`, where nobody can
// make DIR; returns it.
std::string PublicDir(const ScratchDir& base) {
  chmod(base.path().c_str(), 0755);
  const std::string pub = base / "pub";
  std::filesystem::create_directories(pub);
  chmod(pub.c_str(), 01777);
  return pub;
}

}  // namespace

TEST_CASE("a run directory planted with links by another user truncates nothing outside it",
          "[multiprocess][fault]") {
  if (geteuid() != 0) ZF_SKIP("needs root: the attack is on a farm run as root");
  ScratchDir base("zf-planted");
  const std::string pub = PublicDir(base);
  Victims victims(base / "victims");
  const std::string out = pub + "/run", host = HostDir(out);
  // nobody makes the run directory and plants links to root's files in it.
  const std::vector<std::string> planted = {
      ".zerofarm.lock", "metrics.csv", "metrics.prom", "metrics.prom.tmp",
      "config.txt.tmp", "epoch.tmp",   "epoch"};
  std::vector<std::pair<std::string, std::string>> links;  // target, link
  for (const auto& name : planted) links.emplace_back(victims.Make(name), host + "/" + name);
  links.emplace_back(victims.Make("run_id"), out + "/run_id");
  REQUIRE(AsNobody([&] {
    bool ok = mkdir(out.c_str(), 0755) == 0 && mkdir((out + "/shards").c_str(), 0755) == 0 &&
              mkdir(host.c_str(), 0755) == 0;
    for (const auto& [target, link] : links) ok = ok && symlink(target.c_str(), link.c_str()) == 0;
    return ok;
  }));

  SECTION("refused: the directory belongs to another user") {
    Spawned p(FarmArgs(out, {"--games", "2"}), base / "p");
    CheckUsageError(p, 120, Catch::Contains(out) && Catch::Contains("--allow-foreign-dir"));
  }
  SECTION("with --allow-foreign-dir the planted lock link is refused") {
    Spawned p(FarmArgs(out, {"--games", "2", "--allow-foreign-dir"}), base / "p");
    CheckUsageError(p, 120, Catch::Contains(".zerofarm.lock"));
  }
  SECTION("with --allow-foreign-dir and no lock link, the run writes its own files beside the links") {
    // The links it only reads (lock, run_id, epoch) refuse the run (exit 2): gone here.
    REQUIRE(AsNobody([&] {
      return unlink((host + "/.zerofarm.lock").c_str()) == 0 && unlink((out + "/run_id").c_str()) == 0 &&
             unlink((host + "/epoch").c_str()) == 0;
    }));
    Spawned p(FarmArgs(out, {"--games", "4", "--allow-foreign-dir"}), base / "p");
    const int code = p.Wait(300);
    const std::string err = p.Stderr();
    INFO(err.substr(err.size() > 3000 ? err.size() - 3000 : 0));
    CHECK(code == kExitOk);
    // Its own files replaced the links (a rename or a fresh create), none followed.
    for (const char* name : {"metrics.csv", "metrics.prom", "config.txt", "epoch"}) {
      struct stat st;
      INFO(name);
      REQUIRE(lstat((host + "/" + name).c_str(), &st) == 0);
      CHECK(S_ISREG(st.st_mode));
      CHECK(st.st_uid == 0);
    }
    CHECK(FilesWithSuffix(host, ".tmp").empty());
  }
  SECTION("a linked subdirectory is refused even with --allow-foreign-dir") {
    const std::string elsewhere = base / "elsewhere";
    std::filesystem::create_directories(elsewhere);
    const std::string out2 = pub + "/run2";
    REQUIRE(AsNobody([&] {
      return mkdir(out2.c_str(), 0755) == 0 && symlink(elsewhere.c_str(), (out2 + "/shards").c_str()) == 0;
    }));
    Spawned p(FarmArgs(out2, {"--games", "2", "--allow-foreign-dir"}), base / "p");
    CheckUsageError(p, 120, Catch::Contains("symbolic link"));
    CHECK(std::filesystem::is_empty(elsewhere));
  }
  const auto changed = victims.Changed();
  for (const auto& v : changed) INFO("victim changed: " << v);
  CHECK(changed.empty());
}

TEST_CASE("a run or models directory writable by group or others is refused unless allowed",
          "[multiprocess][fault]") {
  ScratchDir base("zf-open-dir");
  const std::string out = base / "run";
  std::filesystem::create_directories(out);
  chmod(out.c_str(), 0777);
  Spawned p(FarmArgs(out, {"--games", "2"}), base / "p");
  CheckUsageError(p, 120, Catch::Contains("writable by others") && Catch::Contains("--allow-foreign-dir"));
  CHECK_FALSE(std::filesystem::exists(out + "/shards"));  // refused before anything was made in it

  const std::string out2 = base / "run2", models = base / "models";
  std::filesystem::create_directories(models);
  chmod(models.c_str(), 0775);
  Spawned q(FarmArgs(out2, {"--games", "2", "--models", models}), base / "q");
  CHECK(q.Wait(120) == kExitUsage);
  CHECK_THAT(q.Stderr(), Catch::Contains(models) && Catch::Contains("writable by its group"));

  Spawned ok(FarmArgs(out, {"--games", "2", "--allow-foreign-dir"}), base / "ok");
  CHECK(ok.Wait(300) == kExitOk);
}

TEST_CASE("a planted manifest in the host directory is refused at start before any child",
          "[multiprocess][fault]") {
  // Issue 76: a link (or any file that is not a regular one) named manifest
  // sent the writer into a crash loop; now the supervisor refuses it at once.
  ScratchDir base("zf-planted-manifest");
  const std::string out = base / "run", host = HostDir(out), victim = base / "victim";
  std::filesystem::create_directories(host);
  std::ofstream(victim) << "victim\n";
  REQUIRE(symlink(victim.c_str(), (host + "/manifest").c_str()) == 0);
  Spawned p(FarmArgs(out, {"--games", "2"}), base / "p");
  CheckUsageError(p, 120, Catch::Contains(host + "/manifest is a link or not a regular file"));
  CHECK(Slurp(victim) == "victim\n");
  CHECK(FilesWithSuffix(host, ".h5").empty());  // no writer ran
}
