#pragma once
// A thin RAII layer over the HDF5 C API, used by the shard and weights files.
//
// Ownership: every HDF5 id is owned by exactly one H5Handle, which closes it
// when destroyed; handles are move-only and a moved-from handle does nothing.
//
// Errors: every failure throws zerofarm::Error with one line that names the
// file, the object and the operation, plus HDF5's most specific reason, e.g.
//   "runs/r1/shards/selfplay-000003.h5: /positions/policy: open dataset failed: object 'policy' doesn't
//   exist"
// HDF5's own automatic printing of its error stack to stderr is switched off
// (per thread: SilenceHdf5Errors(), which every helper here calls). A failure
// caused by a full disk or quota (ENOSPC, EDQUOT) throws NoSpaceError so that
// the writer process can exit with kExitNoSpace. (The shard and weights
// writers build their files in memory, CreateMemoryFile, and write the bytes
// with plain syscalls, so that is where their ENOSPC shows up.)
//
// Threads: the Debian HDF5 build is thread-safe (one global lock), so these
// helpers may be called from any thread; a handle itself is not synchronised.
//
// Why this header may not see <hdf5.h>: zf_io links HDF5 privately, so modules
// above io (proc, cli) and the io tests compile without HDF5's include path.
// They get the few declarations the handles need (hid_t, herr_t, the close
// functions), which match HDF5 >= 1.10; h5.cpp static_asserts that they agree.
// Every other helper takes and returns only hid_t and standard types.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "zerofarm/core/error.h"

#if __has_include(<hdf5.h>)
#include <hdf5.h>
#else
typedef int64_t hid_t;
typedef int herr_t;
extern "C" {
herr_t H5Fclose(hid_t file_id);
herr_t H5Dclose(hid_t dset_id);
herr_t H5Sclose(hid_t space_id);
herr_t H5Gclose(hid_t group_id);
herr_t H5Aclose(hid_t attr_id);
herr_t H5Tclose(hid_t type_id);
herr_t H5Pclose(hid_t plist_id);
}
#endif

namespace zerofarm::io {

// The output disk is full or over quota (ENOSPC / EDQUOT). A writer that sees
// it cannot make progress by restarting: it exits with kExitNoSpace.
class NoSpaceError : public Error {
 public:
  using Error::Error;
};

// Throws Error (or NoSpaceError) "CONTEXT failed: REASON", where REASON is the
// most specific message on the calling thread's HDF5 error stack (or errno's
// text when HDF5 recorded one). Clears the stack. Call it right after the
// failing HDF5 call: any other HDF5 call clears the stack. `context` should
// name the file and the object ("FILE: /positions/z: write").
[[noreturn]] void ThrowHdf5Error(const std::string& context);
// Same, with the context built from `loc` and `name`:
// "FILE: /GROUP/NAME: OPERATION failed: REASON".
[[noreturn]] void ThrowHdf5Error(hid_t loc, const std::string& name, const std::string& operation);

// Turns off HDF5's automatic error printing for the calling thread. Idempotent
// and cheap; every helper below calls it.
void SilenceHdf5Errors();

// Move-only owner of one HDF5 id. Close is the matching H5?close function.
template <herr_t (*Close)(hid_t)>
class H5Handle {
 public:
  H5Handle() = default;  // owns nothing
  // Takes ownership of `id`. Throws Error naming `what` (the operation and
  // the object, e.g. "FILE: open dataset /games/seed") if id < 0.
  H5Handle(hid_t id, const std::string& what) : id_(id) {
    if (id_ < 0) ThrowHdf5Error(what);
  }
  H5Handle(H5Handle&& o) noexcept : id_(std::exchange(o.id_, -1)) {}
  H5Handle& operator=(H5Handle&& o) noexcept {
    if (this != &o) {
      Reset();
      id_ = std::exchange(o.id_, -1);
    }
    return *this;
  }
  H5Handle(const H5Handle&) = delete;  // a copy would close twice
  H5Handle& operator=(const H5Handle&) = delete;
  ~H5Handle() { Reset(); }

  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now; errors from the close are ignored (use CloseChecked to see them).
  void Reset() noexcept {
    if (id_ >= 0) Close(std::exchange(id_, -1));
  }
  // Closes now and throws Error naming `what` if the close fails. Needed for
  // files: H5Fclose is where buffered data reaches the disk, so it can fail
  // with ENOSPC.
  void CloseChecked(const std::string& what) {
    if (id_ >= 0 && Close(std::exchange(id_, -1)) < 0) ThrowHdf5Error(what);
  }

 private:
  hid_t id_ = -1;
};

using H5File = H5Handle<&H5Fclose>;
using H5Dataset = H5Handle<&H5Dclose>;
using H5Dataspace = H5Handle<&H5Sclose>;
using H5Group = H5Handle<&H5Gclose>;
using H5Attr = H5Handle<&H5Aclose>;
using H5Type = H5Handle<&H5Tclose>;
using H5Plist = H5Handle<&H5Pclose>;

// ---- files and groups -------------------------------------------------------

// True if `path` exists and starts with an HDF5 signature (H5Fis_hdf5). A
// truncated HDF5 file still returns true; opening it then fails.
bool IsHdf5File(const std::string& path);
// Creates (truncating) an HDF5 file on disk: the earliest file format that
// supports the features used (readable by any HDF5), link creation order
// tracked at the root, no file locking. For files that must survive write errors use CreateMemoryFile:
// when HDF5 1.10 fails to flush a disk file (ENOSPC), the file stays open
// inside the library and the process crashes in HDF5's atexit handler.
H5File CreateFile(const std::string& path);
// The same, but the file lives in memory (core driver, nothing touches the
// disk); `name` only appears in error messages. Get the bytes with FileImage
// and write them with the fs helpers: then an I/O error is a plain errno.
H5File CreateMemoryFile(const std::string& name);
// Flushes `file` and returns its complete image (what would be on disk).
std::vector<uint8_t> FileImage(hid_t file);
// Opens an existing file read-only (or read-write), without file locking (so
// it works on NFS/Lustre). Throws "PATH: open failed: REASON". Read-only, it
// first refuses (Error "PATH: a damaged HDF5 global heap at byte N ...") a
// file whose global heap would make HDF5 1.10 loop forever.
H5File OpenFile(const std::string& path, bool writable = false);
// Creates a group that tracks link creation order (ListLinks, h5py list them
// in the order written).
H5Group CreateGroup(hid_t loc, const std::string& name);
H5Group OpenGroup(hid_t loc, const std::string& name);
// True if `name` (relative to loc, a single component or a path) exists.
bool HasLink(hid_t loc, const std::string& name);
bool HasAttr(hid_t obj, const std::string& name);
// Removes the link `name` under `loc` (its object goes with the last link);
// throws "FILE: /NAME: delete link failed: ...". For tools and tests that
// repair or damage a file; zerofarm's writers never rewrite in place.
void DeleteLink(hid_t loc, const std::string& name);
// Names of the links directly under group `loc`, in creation order when the
// file tracks it (files written by CreateFile do), otherwise by name.
std::vector<std::string> ListLinks(hid_t loc);
// The file name and the object path of an id ("FILE", "/positions/z").
std::string FileNameOf(hid_t obj);
std::string ObjectNameOf(hid_t obj);

// ---- attributes --------------------------------------------------------------
// T is one of uint8_t, int8_t, int16_t, int32_t, uint32_t, int64_t, uint64_t,
// float, double (instantiated in h5.cpp). Reading converts from any stored
// numeric type HDF5 can convert (so an int64 written by h5py reads as int32).
// Writing replaces an existing attribute of the same name.
template <typename T>
void WriteScalarAttr(hid_t obj, const std::string& name, T value);
template <typename T>
T ReadScalarAttr(hid_t obj, const std::string& name);
template <typename T>
void WriteArrayAttr(hid_t obj, const std::string& name, const std::vector<T>& values);
template <typename T>
std::vector<T> ReadArrayAttr(hid_t obj, const std::string& name);
// Strings are stored as variable-length UTF-8 (h5py reads them as str).
// Reading also accepts fixed-length strings (trailing NULs/spaces stripped).
void WriteStringAttr(hid_t obj, const std::string& name, const std::string& value);
std::string ReadStringAttr(hid_t obj, const std::string& name);
void WriteStringArrayAttr(hid_t obj, const std::string& name, const std::vector<std::string>& values);
// Also accepts a scalar string attribute (returned as one element).
std::vector<std::string> ReadStringArrayAttr(hid_t obj, const std::string& name);

// ---- datasets ----------------------------------------------------------------

// How a dataset is stored. deflate_level 0 stores it uncompressed and
// contiguous; 1..9 chunks it along dim 0 into chunks of about chunk_bytes (at
// least min_chunk_rows rows, at most all of them) with the shuffle filter
// (when shuffle, for multi-byte types) before deflate.
//
// With threads > 1 and more than one chunk, the chunks are shuffled and
// deflated by that many threads and stored with H5Dwrite_chunk; the file is
// the same as HDF5's own filter pipeline would write (any reader decodes it).
struct Compression {
  int deflate_level = 1;  // 0..9; 1 is the fast default
  bool shuffle = true;
  uint64_t chunk_bytes = 1 << 20;
  uint64_t min_chunk_rows = 1024;
  int threads = 2;  // compression threads per dataset write (short-lived)
};

// Writes an N-d dataset (row-major `data`, prod(dims) elements) in one call.
// T as for attributes. An empty dataset (some dim 0) is stored contiguous.
template <typename T>
void WriteDataset(hid_t loc, const std::string& name, const T* data, const std::vector<uint64_t>& dims,
                  const Compression& compression = {});
template <typename T>
void WriteDataset(hid_t loc, const std::string& name, const std::vector<T>& data,
                  const Compression& compression = {}) {
  WriteDataset<T>(loc, name, data.data(), {static_cast<uint64_t>(data.size())}, compression);
}
// True if `name` under `loc` exists and is a dataset (not a group).
bool IsDataset(hid_t loc, const std::string& name);
// Opens the dataset `name` (a path) under `loc`; throws "FILE: /NAME: open dataset failed: ...".
H5Dataset OpenDataset(hid_t loc, const std::string& name);
// True if the dataset stores integers, false for floating point; throws for
// any other type class (strings, compounds).
bool IsIntegerDataset(hid_t loc, const std::string& name);
// The dimensions of a dataset (empty for a scalar), as declared: a crafted
// file may declare more than it stores (StoredDatasetDims).
std::vector<uint64_t> DatasetDims(hid_t loc, const std::string& name);
// DatasetDims, but throws Error when the dataset declares more elements than
// its stored bytes can hold (deflate expands at most 1032:1): for dims that
// size a buffer. ReadDataset checks the same itself.
std::vector<uint64_t> StoredDatasetDims(hid_t loc, const std::string& name);
// Bytes of one element as the file stores it (4 for float32, 8 for int64).
size_t DatasetElementBytes(hid_t loc, const std::string& name);
// Reads a whole dataset, converting to T; `dims` (optional) receives its shape.
template <typename T>
std::vector<T> ReadDataset(hid_t loc, const std::string& name, std::vector<uint64_t>* dims = nullptr);
// Reads rows [first, first + count) along dim 0 into `out`, which must hold
// count * (product of the other dims) elements. Throws if out of range.
template <typename T>
void ReadRows(hid_t loc, const std::string& name, uint64_t first, uint64_t count, T* out);

}  // namespace zerofarm::io
