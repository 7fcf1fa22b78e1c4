#include "zerofarm/io/h5.h"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "h5_internal.h"

namespace zerofarm::io {

using internal::CheckNumeric;
using internal::NativeType;
using internal::SpaceElements;
using internal::Where;

// The declarations h5.h gives to code compiled without <hdf5.h> must agree
// with the real ones.
static_assert(std::is_same_v<hid_t, int64_t>, "h5.h assumes HDF5 >= 1.10 (hid_t is int64_t)");
static_assert(std::is_same_v<herr_t, int>, "h5.h assumes herr_t is int");
static_assert(sizeof(hsize_t) == sizeof(uint64_t), "hsize_t is 64-bit");

namespace {

// What the calling thread's HDF5 error stack says about the last failure.
struct StackInfo {
  std::string detail;  // the most specific description
  int sys_errno = 0;   // an "errno = N" that HDF5 recorded, else 0
};

herr_t WalkCallback(unsigned n, const H5E_error2_t* err, void* data) {
  auto* info = static_cast<StackInfo*>(data);
  if (err == nullptr || err->desc == nullptr) return 0;
  if (info->detail.empty()) info->detail = err->desc;
  if (info->sys_errno == 0) {
    if (const char* p = std::strstr(err->desc, "errno = ")) info->sys_errno = std::atoi(p + 8);
  }
  return 0;
}

StackInfo CaptureStack() {
  StackInfo info;
  // UPWARD starts at the most specific entry (where the error was detected).
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, &WalkCallback, &info);
  H5Eclear2(H5E_DEFAULT);
  std::replace(info.detail.begin(), info.detail.end(), '\n', ' ');
  return info;
}

[[noreturn]] void ThrowWith(const std::string& context, const StackInfo& info) {
  char buf[256];
  // GNU strerror_r: thread-safe, returns the message (maybe not in buf).
  std::string reason = info.sys_errno != 0 ? strerror_r(info.sys_errno, buf, sizeof(buf)) : info.detail;
  if (reason.empty()) reason = "unknown HDF5 error";
  const std::string message = context + " failed: " + reason;
  if (info.sys_errno == ENOSPC || info.sys_errno == EDQUOT) throw NoSpaceError(message);
  throw Error(message);
}

H5Attr OpenAttr(hid_t obj, const std::string& name) {
  SilenceHdf5Errors();
  const hid_t id = H5Aopen(obj, name.c_str(), H5P_DEFAULT);
  if (id < 0) ThrowHdf5Error(obj, "", "open attribute " + name);
  return H5Attr(id, "");
}

H5Type VarStringType() {
  H5Type type(H5Tcopy(H5T_C_S1), "copy string type");
  if (H5Tset_size(type.id(), H5T_VARIABLE) < 0 || H5Tset_cset(type.id(), H5T_CSET_UTF8) < 0)
    ThrowHdf5Error("make string type");
  return type;
}

void WriteAttrRaw(hid_t obj, const std::string& name, hid_t file_type, hid_t mem_type, hid_t space,
                  const void* data) {
  SilenceHdf5Errors();
  if (H5Aexists(obj, name.c_str()) > 0 && H5Adelete(obj, name.c_str()) < 0)
    ThrowHdf5Error(obj, "", "replace attribute " + name);
  const hid_t id = H5Acreate2(obj, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) ThrowHdf5Error(obj, "", "create attribute " + name);
  H5Attr attr(id, "");
  if (H5Sget_simple_extent_npoints(space) == 0) return;  // nothing to write (HDF5 rejects a null buffer)
  if (H5Awrite(attr.id(), mem_type, data) < 0) ThrowHdf5Error(obj, "", "write attribute " + name);
}

// Reads all strings of a string attribute (scalar or 1-D).
std::vector<std::string> ReadStrings(hid_t obj, const std::string& name) {
  H5Attr attr = OpenAttr(obj, name);
  H5Type ftype(H5Aget_type(attr.id()), "attribute type");
  if (H5Tget_class(ftype.id()) != H5T_STRING)
    throw Error(Where(obj, "") + ": attribute " + name + " is not a string");
  H5Dataspace space(H5Aget_space(attr.id()), "attribute space");
  std::vector<hsize_t> dims;
  const uint64_t n = SpaceElements(space.id(), &dims);
  std::vector<std::string> out;
  if (n == 0) return out;
  if (H5Tis_variable_str(ftype.id()) > 0) {
    H5Type mtype = VarStringType();
    H5Tset_cset(mtype.id(), H5Tget_cset(ftype.id()));
    std::vector<char*> ptrs(n, nullptr);
    if (H5Aread(attr.id(), mtype.id(), ptrs.data()) < 0) ThrowHdf5Error(obj, "", "read attribute " + name);
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(mtype.id(), space.id(), H5P_DEFAULT, ptrs.data());
  } else {
    const size_t size = H5Tget_size(ftype.id());
    std::vector<char> buf(n * size + 1, '\0');
    if (H5Aread(attr.id(), ftype.id(), buf.data()) < 0) ThrowHdf5Error(obj, "", "read attribute " + name);
    for (uint64_t i = 0; i < n; ++i) {
      std::string s(buf.data() + i * size, size);
      s = s.substr(0, s.find('\0'));
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace

namespace internal {

// "FILE: /GROUP/NAME" for `name` relative to `loc` (NAME may be empty).
std::string Where(hid_t loc, const std::string& name) {
  std::string file = FileNameOf(loc);
  std::string object = ObjectNameOf(loc);
  if (!name.empty()) {
    if (object.empty() || object.back() != '/') object += '/';
    object += name;
  }
  if (object.empty()) object = "/";
  return file + ": " + object;
}

// Number of elements of a dataspace, and its dims.
uint64_t SpaceElements(hid_t space, std::vector<hsize_t>* dims) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) ThrowHdf5Error("query dataspace");
  dims->assign(static_cast<size_t>(rank), 0);
  if (rank > 0) H5Sget_simple_extent_dims(space, dims->data(), nullptr);
  if (H5Sget_simple_extent_type(space) == H5S_NULL) return 0;
  uint64_t n = 1;
  for (hsize_t d : *dims) n *= d;
  return n;
}

void CheckNumeric(hid_t type, hid_t obj, const std::string& what) {
  const H5T_class_t cls = H5Tget_class(type);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) throw Error(Where(obj, "") + ": " + what + " is not numeric");
}

}  // namespace internal

H5Dataset OpenDataset(hid_t loc, const std::string& name) {
  SilenceHdf5Errors();
  const hid_t id = H5Dopen2(loc, name.c_str(), H5P_DEFAULT);
  if (id < 0) ThrowHdf5Error(loc, name, "open dataset");
  return H5Dataset(id, "");
}

// ---- errors -------------------------------------------------------------------

void ThrowHdf5Error(const std::string& context) { ThrowWith(context, CaptureStack()); }

void ThrowHdf5Error(hid_t loc, const std::string& name, const std::string& operation) {
  const StackInfo info = CaptureStack();  // before any other call clears it
  ThrowWith(Where(loc, name) + ": " + operation, info);
}

void SilenceHdf5Errors() {
  // Per thread in a thread-safe HDF5 build, hence thread_local.
  thread_local bool silenced = false;
  if (!silenced) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    silenced = true;
  }
}

// ---- files and groups -------------------------------------------------------------

bool IsHdf5File(const std::string& path) {
  SilenceHdf5Errors();
  const htri_t r = H5Fis_hdf5(path.c_str());
  H5Eclear2(H5E_DEFAULT);
  return r > 0;
}

namespace {
H5Plist FileAccess() {
  H5Plist fapl(H5Pcreate(H5P_FILE_ACCESS), "create file access property list");
#if H5_VERSION_GE(1, 10, 7)
  // No locking: a shard or weights file is private to its writer until it is
  // renamed into place, and flock fails on some network file systems.
  H5Pset_file_locking(fapl.id(), 0, 1);
#endif
  return fapl;
}
}  // namespace

namespace {
H5File CreateWith(const std::string& path, H5Plist fapl) {
  // The earliest format that supports each feature used: any HDF5 reader
  // (h5py with any bundled HDF5) opens it. Not V18 or later: for such files
  // (superblock v2+) HDF5 1.10.8's H5Fget_file_image returns an image whose
  // superblock checksum is wrong. String attributes are variable-length, so
  // their text lives in the global heap and a long config fits.
  if (H5Pset_libver_bounds(fapl.id(), H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST) < 0)
    ThrowHdf5Error(path + ": set file format");
  H5Plist fcpl(H5Pcreate(H5P_FILE_CREATE), "create file creation property list");
  if (H5Pset_link_creation_order(fcpl.id(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0)
    ThrowHdf5Error(path + ": set link creation order");
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.id(), fapl.id());
  if (id < 0) ThrowHdf5Error(path + ": create");
  return H5File(id, "");
}
}  // namespace

H5File CreateFile(const std::string& path) {
  SilenceHdf5Errors();
  return CreateWith(path, FileAccess());
}

H5File CreateMemoryFile(const std::string& name) {
  SilenceHdf5Errors();
  H5Plist fapl(H5Pcreate(H5P_FILE_ACCESS), "create file access property list");
  // Grows in steps of 8 MiB; backing_store 0: never written to `name`.
  if (H5Pset_fapl_core(fapl.id(), size_t{8} << 20, 0) < 0) ThrowHdf5Error(name + ": set core driver");
  return CreateWith(name, std::move(fapl));
}

std::vector<uint8_t> FileImage(hid_t file) {
  SilenceHdf5Errors();
  if (H5Fflush(file, H5F_SCOPE_LOCAL) < 0) ThrowHdf5Error(FileNameOf(file) + ": flush");
  const ssize_t size = H5Fget_file_image(file, nullptr, 0);
  if (size < 0) ThrowHdf5Error(FileNameOf(file) + ": get file image");
  std::vector<uint8_t> image(static_cast<size_t>(size));
  if (H5Fget_file_image(file, image.data(), image.size()) != size)
    ThrowHdf5Error(FileNameOf(file) + ": get file image");
  return image;
}

namespace {
uint64_t LoadLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Throws Error unless the global heap collection at image[at..] (its "GCOL"
// signature, version 1) walks as HDF5 walks it (H5HG__cache_heap_deserialize):
// each object moves on by its header and aligned size (index 0, the free
// space: by its size alone), and none runs past the collection.
void CheckGlobalHeap(const std::string& path, const uint8_t* image, uint64_t file_size, uint64_t at) {
  constexpr uint64_t kHeader = 16, kObjectHeader = 16;  // 8-byte lengths, as zerofarm writes
  const uint64_t size = LoadLe(image + at + 8, 8);
  if (size > file_size - at) return;  // HDF5 fails to read it: an error, not a hang
  for (uint64_t q = kHeader; q + kObjectHeader <= size;) {
    const uint64_t index = LoadLe(image + at + q, 2), object = LoadLe(image + at + q + 8, 8);
    const uint64_t left = size - q;
    const uint64_t need =
        index > 0 ? (object > left ? left + 1 : kObjectHeader + ((object + 7) & ~uint64_t{7})) : object;
    if (need == 0 || need > left)
      throw Error(path + ": a damaged HDF5 global heap at byte " + std::to_string(at) + " (object " +
                  std::to_string(index) + " of " + std::to_string(object) +
                  " bytes), which HDF5 1.10 would read forever or past its end");
    q += need;
  }
}

// HDF5 1.10.8 loops forever on a global heap collection whose free-space
// object has size 0 (fuzzing found it: tests/fuzz/shard_fuzz.cpp), and every
// string attribute of a shard or a weights file lives in one. So before HDF5
// opens a file for reading, every collection in it ("GCOL", version 1) is
// walked here; a damaged one throws Error naming the file and the byte. A
// file that cannot be mapped is left to HDF5, which says why.
void CheckGlobalHeaps(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 32) {
    ::close(fd);
    return;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return;
  const auto* image = static_cast<const uint8_t*>(map);
  try {
    for (const uint8_t* p = image;
         (p = static_cast<const uint8_t*>(::memmem(p, image + size - p, "GCOL", 4))); ++p) {
      const uint64_t at = static_cast<uint64_t>(p - image);
      if (at + 16 <= size && image[at + 4] == 1) CheckGlobalHeap(path, image, size, at);
    }
  } catch (...) {
    ::munmap(map, size);
    throw;
  }
  ::munmap(map, size);
}
}  // namespace

H5File OpenFile(const std::string& path, bool writable) {
  SilenceHdf5Errors();
  if (!writable) CheckGlobalHeaps(path);
  H5Plist fapl = FileAccess();
  const hid_t id = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.id());
  if (id < 0) ThrowHdf5Error(path + ": open");
  return H5File(id, "");
}

H5Group CreateGroup(hid_t loc, const std::string& name) {
  SilenceHdf5Errors();
  H5Plist gcpl(H5Pcreate(H5P_GROUP_CREATE), "create group creation property list");
  if (H5Pset_link_creation_order(gcpl.id(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0)
    ThrowHdf5Error(loc, name, "set link creation order");
  const hid_t id = H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, gcpl.id(), H5P_DEFAULT);
  if (id < 0) ThrowHdf5Error(loc, name, "create group");
  return H5Group(id, "");
}

H5Group OpenGroup(hid_t loc, const std::string& name) {
  SilenceHdf5Errors();
  const hid_t id = H5Gopen2(loc, name.c_str(), H5P_DEFAULT);
  if (id < 0) ThrowHdf5Error(loc, name, "open group");
  return H5Group(id, "");
}

bool HasLink(hid_t loc, const std::string& name) {
  SilenceHdf5Errors();
  // H5Lexists needs every intermediate component to exist: check them in turn.
  size_t pos = 0;
  while (true) {
    const size_t slash = name.find('/', pos);
    const std::string prefix = name.substr(0, slash);
    if (!prefix.empty() && H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    if (slash == std::string::npos) return !prefix.empty();
    pos = slash + 1;
  }
}

bool HasAttr(hid_t obj, const std::string& name) {
  SilenceHdf5Errors();
  const htri_t r = H5Aexists(obj, name.c_str());
  if (r < 0) ThrowHdf5Error(obj, "", "look for attribute " + name);
  return r > 0;
}

void DeleteLink(hid_t loc, const std::string& name) {
  SilenceHdf5Errors();
  if (H5Ldelete(loc, name.c_str(), H5P_DEFAULT) < 0) ThrowHdf5Error(loc, name, "delete link");
}

std::vector<std::string> ListLinks(hid_t loc) {
  SilenceHdf5Errors();
  H5G_info_t info;
  if (H5Gget_info(loc, &info) < 0) ThrowHdf5Error(loc, "", "list links");
  H5_index_t index = H5_INDEX_NAME;
  {
    // Through H5Gopen2(".") so that a file id (the root group) works too.
    H5Group group = OpenGroup(loc, ".");
    H5Plist gcpl(H5Gget_create_plist(group.id()), "group creation property list");
    unsigned flags = 0;
    if (H5Pget_link_creation_order(gcpl.id(), &flags) >= 0 && (flags & H5P_CRT_ORDER_TRACKED) != 0 &&
        (flags & H5P_CRT_ORDER_INDEXED) != 0)
      index = H5_INDEX_CRT_ORDER;
  }
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len = H5Lget_name_by_idx(loc, ".", index, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len < 0) ThrowHdf5Error(loc, "", "list links");
    std::string name(static_cast<size_t>(len) + 1, '\0');
    H5Lget_name_by_idx(loc, ".", index, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
    name.resize(static_cast<size_t>(len));
    names.push_back(std::move(name));
  }
  return names;
}

std::string FileNameOf(hid_t obj) {
  const ssize_t len = H5Fget_name(obj, nullptr, 0);
  if (len <= 0) return "(unknown file)";
  std::string s(static_cast<size_t>(len) + 1, '\0');
  H5Fget_name(obj, s.data(), s.size());
  s.resize(static_cast<size_t>(len));
  return s;
}

std::string ObjectNameOf(hid_t obj) {
  const ssize_t len = H5Iget_name(obj, nullptr, 0);
  if (len <= 0) return "";
  std::string s(static_cast<size_t>(len) + 1, '\0');
  H5Iget_name(obj, s.data(), s.size());
  s.resize(static_cast<size_t>(len));
  return s;
}

// ---- attributes ---------------------------------------------------------------------

template <typename T>
void WriteScalarAttr(hid_t obj, const std::string& name, T value) {
  H5Dataspace space(H5Screate(H5S_SCALAR), "create scalar dataspace");
  WriteAttrRaw(obj, name, NativeType<T>(), NativeType<T>(), space.id(), &value);
}

template <typename T>
T ReadScalarAttr(hid_t obj, const std::string& name) {
  H5Attr attr = OpenAttr(obj, name);
  H5Type ftype(H5Aget_type(attr.id()), "attribute type");
  CheckNumeric(ftype.id(), obj, "attribute " + name);
  H5Dataspace space(H5Aget_space(attr.id()), "attribute space");
  std::vector<hsize_t> dims;
  if (SpaceElements(space.id(), &dims) != 1)
    throw Error(Where(obj, "") + ": attribute " + name + " is not a single value");
  T value{};
  if (H5Aread(attr.id(), NativeType<T>(), &value) < 0) ThrowHdf5Error(obj, "", "read attribute " + name);
  return value;
}

template <typename T>
void WriteArrayAttr(hid_t obj, const std::string& name, const std::vector<T>& values) {
  const hsize_t n = values.size();
  H5Dataspace space(H5Screate_simple(1, &n, nullptr), "create dataspace");
  WriteAttrRaw(obj, name, NativeType<T>(), NativeType<T>(), space.id(), values.data());
}

template <typename T>
std::vector<T> ReadArrayAttr(hid_t obj, const std::string& name) {
  H5Attr attr = OpenAttr(obj, name);
  H5Type ftype(H5Aget_type(attr.id()), "attribute type");
  CheckNumeric(ftype.id(), obj, "attribute " + name);
  H5Dataspace space(H5Aget_space(attr.id()), "attribute space");
  std::vector<hsize_t> dims;
  std::vector<T> values(SpaceElements(space.id(), &dims));
  if (!values.empty() && H5Aread(attr.id(), NativeType<T>(), values.data()) < 0)
    ThrowHdf5Error(obj, "", "read attribute " + name);
  return values;
}

void WriteStringAttr(hid_t obj, const std::string& name, const std::string& value) {
  H5Type type = VarStringType();
  H5Dataspace space(H5Screate(H5S_SCALAR), "create scalar dataspace");
  const char* p = value.c_str();
  WriteAttrRaw(obj, name, type.id(), type.id(), space.id(), &p);
}

std::string ReadStringAttr(hid_t obj, const std::string& name) {
  std::vector<std::string> values = ReadStrings(obj, name);
  if (values.size() != 1) throw Error(Where(obj, "") + ": attribute " + name + " is not a single string");
  return values[0];
}

void WriteStringArrayAttr(hid_t obj, const std::string& name, const std::vector<std::string>& values) {
  H5Type type = VarStringType();
  const hsize_t n = values.size();
  H5Dataspace space(H5Screate_simple(1, &n, nullptr), "create dataspace");
  std::vector<const char*> ptrs;
  ptrs.reserve(values.size());
  for (const auto& v : values) ptrs.push_back(v.c_str());
  WriteAttrRaw(obj, name, type.id(), type.id(), space.id(), ptrs.data());
}

std::vector<std::string> ReadStringArrayAttr(hid_t obj, const std::string& name) {
  return ReadStrings(obj, name);
}

#define ZF_H5_INSTANTIATE(T)                                                         \
  template void WriteScalarAttr<T>(hid_t, const std::string&, T);                    \
  template T ReadScalarAttr<T>(hid_t, const std::string&);                           \
  template void WriteArrayAttr<T>(hid_t, const std::string&, const std::vector<T>&); \
  template std::vector<T> ReadArrayAttr<T>(hid_t, const std::string&);

ZF_H5_FOR_EACH_TYPE(ZF_H5_INSTANTIATE)
#undef ZF_H5_INSTANTIATE

}  // namespace zerofarm::io
