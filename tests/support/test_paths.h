#pragma once
// Paths the tests need: the reference data and scratch directories.
#include <ftw.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace zerofarm::testing {

// data/reference of the source tree, or $ZF_REFERENCE_DIR when set.
inline std::string ReferenceDir() {
  if (const char* env = std::getenv("ZF_REFERENCE_DIR")) return env;
  return ZF_REFERENCE_DIR;
}
inline std::string ReferenceFile(const std::string& relative) { return ReferenceDir() + "/" + relative; }
inline std::string SourceDir() { return ZF_SOURCE_DIR; }

// A fresh directory under $TMPDIR (or /tmp), removed when the object dies.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag = "zf-test") {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp ? tmp : "/tmp") + "/" + tag + "-XXXXXX";
    path_ = ::mkdtemp(templ.data()) ? templ : std::string();
  }
  ~ScratchDir() {
    // nftw, not std::filesystem::remove_all: PyTorch's pip LibTorch exports its
    // own copy of that, which crashed here (see io::RemoveTree).
    auto remove_one = [](const char* entry, const struct stat*, int, struct FTW*) { return ::remove(entry); };
    if (!path_.empty()) ::nftw(path_.c_str(), remove_one, 32, FTW_DEPTH | FTW_PHYS);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace zerofarm::testing
