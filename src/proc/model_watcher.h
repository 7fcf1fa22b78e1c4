#pragma once
// Hot reload: the evaluator's view of the models directory. Weights files
// named model-<N>.h5 (written atomically by `zerofarm train` or any tool:
// NAME.tmp, then rename) appear there with increasing N; the evaluator asks
// at most once a second for the newest one it has not tried yet, and swaps
// its network between batches, so no batch is evaluated by two models.
#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace zerofarm::proc {

class ModelWatcher {
 public:
  explicit ModelWatcher(std::string dir) : dir_(std::move(dir)) {}
  // The newest model-N.h5 with N > the number of the last file offered, if
  // any, and if a second has passed since the last look (or `now` is forced).
  std::optional<std::string> Poll(bool force = false);
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int64_t offered_ = -1;  // N of the newest file offered (loaded or refused)
  double last_look_ = -1e9;
};

// N of "model-N.h5", or -1 for any other name.
int64_t ModelNumber(const std::string& filename);

}  // namespace zerofarm::proc
