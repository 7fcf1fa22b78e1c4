// Datasets: WriteDataset (with parallel chunk compression), ReadDataset,
// ReadRows, DatasetDims, IsDataset, IsIntegerDataset (declared in h5.h).
#include <hdf5.h>
#include <zlib.h>  // ZLIB::ZLIB (CMakeLists.txt)

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>

#include "h5_internal.h"
#include "zerofarm/io/h5.h"

namespace zerofarm::io {

using internal::CheckNumeric;
using internal::NativeType;
using internal::SpaceElements;
using internal::Where;

namespace {

// Stores the chunked dataset `dset` ([rows, ...] with chunks of chunk_rows
// rows) from `data`, compressing chunks on `threads` threads exactly as the
// dataset's filter pipeline (shuffle when `shuffle`, then deflate) would.
void WriteChunksInParallel(hid_t dset, const uint8_t* data, uint64_t rows, uint64_t row_bytes,
                           size_t elem_size, uint64_t chunk_rows, int rank, bool shuffle, int level,
                           int threads, const std::function<void()>& fail) {
  const uint64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  const uint64_t chunk_bytes = chunk_rows * row_bytes;
  std::vector<std::vector<uint8_t>> out(chunks);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    std::vector<uint8_t> raw(chunk_bytes), shuffled(shuffle ? chunk_bytes : 0);
    for (uint64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      // relaxed: each index is claimed once; results are published by join().
      const uint64_t first = c * chunk_rows;
      const uint64_t bytes = std::min(chunk_rows, rows - first) * row_bytes;
      // An edge chunk is stored full size; HDF5 ignores the padding.
      std::copy(data + first * row_bytes, data + first * row_bytes + bytes, raw.begin());
      std::fill(raw.begin() + static_cast<ptrdiff_t>(bytes), raw.end(), 0);
      const uint8_t* src = raw.data();
      if (shuffle) {  // H5Z shuffle: byte j of element i goes to j * elements + i
        const size_t elems = chunk_bytes / elem_size;
        for (size_t j = 0; j < elem_size; ++j)
          for (size_t i = 0; i < elems; ++i) shuffled[j * elems + i] = raw[i * elem_size + j];
        src = shuffled.data();
      }
      uLongf len = compressBound(static_cast<uLong>(chunk_bytes));
      out[c].resize(len);
      if (compress2(out[c].data(), &len, src, static_cast<uLong>(chunk_bytes), level) != Z_OK) {
        failed.store(true, std::memory_order_relaxed);  // read after join()
        return;
      }
      out[c].resize(len);
    }
  };
  std::vector<std::thread> pool;
  const int n = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(threads), chunks));
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failed.load(std::memory_order_relaxed)) throw Error("zlib compress2 failed");
  std::vector<hsize_t> offset(static_cast<size_t>(rank), 0);
  for (uint64_t c = 0; c < chunks; ++c) {
    offset[0] = c * chunk_rows;
    if (H5Dwrite_chunk(dset, H5P_DEFAULT, 0, offset.data(), out[c].size(), out[c].data()) < 0) fail();
  }
}

}  // namespace

// ---- datasets ---------------------------------------------------------------------

template <typename T>
void WriteDataset(hid_t loc, const std::string& name, const T* data, const std::vector<uint64_t>& dims,
                  const Compression& compression) {
  SilenceHdf5Errors();
  if (compression.deflate_level < 0 || compression.deflate_level > 9)
    throw ConfigError("deflate level must be in 0..9, got " + std::to_string(compression.deflate_level));
  const std::vector<hsize_t> hdims(dims.begin(), dims.end());
  uint64_t total = 1;
  for (uint64_t d : dims) total *= d;
  H5Dataspace space(hdims.empty() ? H5Screate(H5S_SCALAR)
                                  : H5Screate_simple(static_cast<int>(hdims.size()), hdims.data(), nullptr),
                    Where(loc, name) + ": create dataspace");
  H5Plist dcpl(H5Pcreate(H5P_DATASET_CREATE), "create dataset property list");
  H5Pset_fill_time(dcpl.id(), H5D_FILL_TIME_NEVER);  // every element is written
  const bool chunked = compression.deflate_level > 0 && !hdims.empty() && total > 0;
  const bool shuffle = compression.shuffle && sizeof(T) > 1;
  const uint64_t row_bytes = hdims.empty() || total == 0 ? 0 : total / dims[0] * sizeof(T);
  uint64_t chunk_rows = 0;
  if (chunked) {
    chunk_rows = std::max<uint64_t>(compression.chunk_bytes / std::max<uint64_t>(row_bytes, 1),
                                    compression.min_chunk_rows);
    chunk_rows = std::max<uint64_t>(1, std::min<uint64_t>(chunk_rows, dims[0]));
    std::vector<hsize_t> chunk = hdims;
    chunk[0] = chunk_rows;
    if (H5Pset_chunk(dcpl.id(), static_cast<int>(chunk.size()), chunk.data()) < 0 ||
        (shuffle && H5Pset_shuffle(dcpl.id()) < 0) ||
        H5Pset_deflate(dcpl.id(), static_cast<unsigned>(compression.deflate_level)) < 0)
      ThrowHdf5Error(loc, name, "set chunking and compression");
  }
  const hid_t id =
      H5Dcreate2(loc, name.c_str(), NativeType<T>(), space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT);
  if (id < 0) ThrowHdf5Error(loc, name, "create dataset");
  H5Dataset dset(id, "");
  if (total == 0) return;
  if (chunked && compression.threads > 1 && dims[0] > chunk_rows) {
    WriteChunksInParallel(dset.id(), reinterpret_cast<const uint8_t*>(data), dims[0], row_bytes, sizeof(T),
                          chunk_rows, static_cast<int>(hdims.size()), shuffle, compression.deflate_level,
                          compression.threads, [&] { ThrowHdf5Error(loc, name, "write chunk"); });
    return;
  }
  if (H5Dwrite(dset.id(), NativeType<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    ThrowHdf5Error(loc, name, "write");
}

bool IsDataset(hid_t loc, const std::string& name) {
  if (!HasLink(loc, name)) return false;
  const hid_t id = H5Oopen(loc, name.c_str(), H5P_DEFAULT);
  if (id < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;  // a dangling soft or external link
  }
  const bool is_dataset = H5Iget_type(id) == H5I_DATASET;
  H5Oclose(id);
  return is_dataset;
}

bool IsIntegerDataset(hid_t loc, const std::string& name) {
  H5Dataset dset = OpenDataset(loc, name);
  H5Type ftype(H5Dget_type(dset.id()), "dataset type");
  CheckNumeric(ftype.id(), loc, "dataset " + name);
  return H5Tget_class(ftype.id()) == H5T_INTEGER;
}

namespace {

// A crafted file can declare 2^60 elements in a few bytes: refused before
// anything is allocated for them (fuzzing found it, issue 75). Deflate
// expands at most 1032:1, so a dataset that stores S bytes holds at most
// 1032 S + 4 KiB of data, in its file type's element size.
void CheckDeclaredSize(hid_t dset, hid_t ftype, uint64_t elements, hid_t loc, const std::string& name) {
  const size_t element_bytes = H5Tget_size(ftype);
  const uint64_t stored = H5Dget_storage_size(dset);
  constexpr uint64_t kMaxStored = uint64_t{1} << 50;  // so that 1032 * stored fits in 64 bits
  const uint64_t limit = stored > kMaxStored ? 0 : 1032 * stored + 4096;
  if (elements > limit / std::max<size_t>(element_bytes, 1))
    throw Error(Where(loc, name) + ": declares " + std::to_string(elements) + " elements but stores " +
                std::to_string(stored) + " bytes: a damaged or crafted file");
}

}  // namespace

std::vector<uint64_t> StoredDatasetDims(hid_t loc, const std::string& name) {
  H5Dataset dset = OpenDataset(loc, name);
  H5Type ftype(H5Dget_type(dset.id()), "dataset type");
  H5Dataspace space(H5Dget_space(dset.id()), "dataset space");
  std::vector<hsize_t> dims;
  CheckDeclaredSize(dset.id(), ftype.id(), SpaceElements(space.id(), &dims), loc, name);
  return std::vector<uint64_t>(dims.begin(), dims.end());
}

std::vector<uint64_t> DatasetDims(hid_t loc, const std::string& name) {
  H5Dataset dset = OpenDataset(loc, name);
  H5Dataspace space(H5Dget_space(dset.id()), "dataset space");
  std::vector<hsize_t> dims;
  SpaceElements(space.id(), &dims);
  return std::vector<uint64_t>(dims.begin(), dims.end());
}

size_t DatasetElementBytes(hid_t loc, const std::string& name) {
  H5Dataset dset = OpenDataset(loc, name);
  H5Type ftype(H5Dget_type(dset.id()), "dataset type");
  return H5Tget_size(ftype.id());
}

template <typename T>
std::vector<T> ReadDataset(hid_t loc, const std::string& name, std::vector<uint64_t>* dims_out) {
  H5Dataset dset = OpenDataset(loc, name);
  H5Type ftype(H5Dget_type(dset.id()), "dataset type");
  CheckNumeric(ftype.id(), loc, "dataset " + name);
  H5Dataspace space(H5Dget_space(dset.id()), "dataset space");
  std::vector<hsize_t> dims;
  const uint64_t elements = SpaceElements(space.id(), &dims);
  CheckDeclaredSize(dset.id(), ftype.id(), elements, loc, name);
  std::vector<T> out(elements);
  if (!out.empty() && H5Dread(dset.id(), NativeType<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    ThrowHdf5Error(loc, name, "read");
  if (dims_out) dims_out->assign(dims.begin(), dims.end());
  return out;
}

template <typename T>
void ReadRows(hid_t loc, const std::string& name, uint64_t first, uint64_t count, T* out) {
  H5Dataset dset = OpenDataset(loc, name);
  H5Type ftype(H5Dget_type(dset.id()), "dataset type");
  CheckNumeric(ftype.id(), loc, "dataset " + name);
  H5Dataspace fspace(H5Dget_space(dset.id()), "dataset space");
  std::vector<hsize_t> dims;
  SpaceElements(fspace.id(), &dims);
  if (dims.empty() || first > dims[0] || count > dims[0] - first)
    throw Error(Where(loc, name) + ": rows [" + std::to_string(first) + ", " + std::to_string(first + count) +
                ") out of range (" + std::to_string(dims.empty() ? 0 : dims[0]) + " rows)");
  if (count == 0) return;
  std::vector<hsize_t> start(dims.size(), 0), extent = dims;
  start[0] = first;
  extent[0] = count;
  if (H5Sselect_hyperslab(fspace.id(), H5S_SELECT_SET, start.data(), nullptr, extent.data(), nullptr) < 0)
    ThrowHdf5Error(loc, name, "select rows");
  H5Dataspace mspace(H5Screate_simple(static_cast<int>(extent.size()), extent.data(), nullptr),
                     "create dataspace");
  if (H5Dread(dset.id(), NativeType<T>(), mspace.id(), fspace.id(), H5P_DEFAULT, out) < 0)
    ThrowHdf5Error(loc, name, "read rows");
}

#define ZF_H5_INSTANTIATE(T)                                                                       \
  template void WriteDataset<T>(hid_t, const std::string&, const T*, const std::vector<uint64_t>&, \
                                const Compression&);                                               \
  template std::vector<T> ReadDataset<T>(hid_t, const std::string&, std::vector<uint64_t>*);       \
  template void ReadRows<T>(hid_t, const std::string&, uint64_t, uint64_t, T*);

ZF_H5_FOR_EACH_TYPE(ZF_H5_INSTANTIATE)
#undef ZF_H5_INSTANTIATE

}  // namespace zerofarm::io
