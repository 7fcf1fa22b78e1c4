#pragma once
// A host directory's shard manifest, HOST/manifest: one line per shard the
// writer renamed into place, appended only after the rename and the
// directory's fsync, so a listed shard is durable:
//
//   shard-000123.h5 POSITIONS GAMES\n
//
// Append-only. A writer killed mid-append leaves a torn last line (no
// newline): readers ignore it, and the next writer start truncates it
// (RepairShardManifest). A shard renamed but not yet listed (a writer killed
// between the two) is listed by that repair. Readers follow the file by
// offset (ShardManifestReader), so finding new shards costs O(new shards),
// not a listing of the whole directory. Implementation:
// src/io/shard_manifest.cpp.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace zerofarm::io {

inline constexpr const char* kShardManifestName = "manifest";

struct ManifestEntry {
  std::string name;  // "shard-000123.h5": a file name in the host directory, no '/'
  uint64_t positions = 0;
  uint64_t games = 0;
};

// Appends NAME's line to DIR/manifest (created 0644 if absent, never through
// a link), fsyncs it, and fsyncs DIR when it created the file. Throws Error on
// a disk error. Call only after NAME's rename is durable.
void AppendShardManifest(const std::string& dir, const ManifestEntry& entry);

// At a writer's start (it holds the host lock): truncates a torn last line of DIR/manifest, then lists
// PREFIX-N.h5 shards of DIR the manifest lacks (above the last listed index), read for their counts after
// the HDF5 checker (CheckOwnFiles): one it refuses is not listed (a line says so), one that crashes it is
// set aside. Creates the manifest of a directory written before manifests (listing every
// shard once). Returns the number of lines it appended; throws Error on a
// disk error or a manifest it cannot parse.
uint64_t RepairShardManifest(const std::string& dir, const std::string& prefix);

// ConfigError (exit 2) when DIR/manifest is there but is a link, a directory,
// a FIFO or a file with a second name (planted): the supervisor checks it at
// start, before any child, so a writer never crash-loops on it. The other
// functions here throw the same ConfigError for such a manifest.
void CheckShardManifest(const std::string& dir);

// Follows DIR/manifest: each ReadNew() returns the complete lines added since
// the last call. A torn last line is left for a later call. Not thread-safe.
class ShardManifestReader {
 public:
  explicit ShardManifestReader(std::string dir);
  // Whether DIR/manifest exists (a run written before manifests has none:
  // list the directory instead).
  bool Present() const;
  // The new complete lines; a line that does not parse (hostile or damaged
  // input) throws Error naming the file and the line.
  std::vector<ManifestEntry> ReadNew();
  uint64_t Offset() const { return offset_; }

 private:
  std::string path_;
  uint64_t offset_ = 0;
  uint64_t line_ = 0;  // lines read so far (for messages)
};

// Follows every host directory of a run's SHARDS_DIR (RUN/shards/HOST/):
// each NewShards() returns the paths of shards not returned before, from a
// host's manifest when it has one (O(new lines)), else from a listing of
// that host's directory (runs written before manifests), and the shards of
// runs from before hosts (SHARDS_DIR/*.h5). A listed shard that is missing
// (removed by hand) is skipped with a warning; a host whose manifest has a
// damaged line is listed from then on (a warning). Not thread-safe.
class RunShardFollower {
 public:
  explicit RunShardFollower(std::string shards_dir);
  std::vector<std::string> NewShards();
  // Host directories read from a manifest / by listing, at the last call.
  int ManifestHosts() const { return manifest_hosts_; }
  int ListedHosts() const { return listed_hosts_; }

 private:
  struct Host {
    explicit Host(const std::string& dir) : reader(dir) {}
    ShardManifestReader reader;
    std::set<std::string> returned;  // names already returned
    bool broken = false;             // its manifest has a damaged line: listed instead
  };
  void FromHost(const std::string& dir, Host& host, std::vector<std::string>* out);

  std::string shards_dir_;
  std::map<std::string, Host> hosts_;  // by directory path
  std::set<std::string> top_;          // SHARDS_DIR/*.h5 already returned
  int manifest_hosts_ = 0;
  int listed_hosts_ = 0;
};

// Parses one manifest line (without its newline); false if malformed.
bool ParseManifestLine(const std::string& line, ManifestEntry* entry);

}  // namespace zerofarm::io
