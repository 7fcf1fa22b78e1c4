#pragma once
// Helpers shared by h5.cpp (files, groups, attributes) and h5_dataset.cpp
// (datasets). Private to io: includes <hdf5.h>.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "zerofarm/io/h5.h"

namespace zerofarm::io::internal {

template <typename T>
inline hid_t NativeType() {
  if constexpr (std::is_same_v<T, uint8_t>)
    return H5T_NATIVE_UINT8;
  else if constexpr (std::is_same_v<T, int8_t>)
    return H5T_NATIVE_INT8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return H5T_NATIVE_INT16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return H5T_NATIVE_INT32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return H5T_NATIVE_UINT32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return H5T_NATIVE_UINT64;
  else if constexpr (std::is_same_v<T, float>)
    return H5T_NATIVE_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return H5T_NATIVE_DOUBLE;
  else
    static_assert(sizeof(T) == 0, "unsupported HDF5 element type");
}

// "FILE: /GROUP/NAME" for `name` relative to `loc` (NAME may be empty).
std::string Where(hid_t loc, const std::string& name);
// Number of elements of a dataspace (0 for a null one); `dims` gets its shape.
uint64_t SpaceElements(hid_t space, std::vector<hsize_t>* dims);
// Throws Error "FILE: OBJECT: WHAT is not numeric" unless `type` is an integer or float type.
void CheckNumeric(hid_t type, hid_t obj, const std::string& what);

}  // namespace zerofarm::io::internal

// X(T) for every element type the attribute and dataset templates are
// explicitly instantiated for (h5.cpp, h5_dataset.cpp).
#define ZF_H5_FOR_EACH_TYPE(X) \
  X(uint8_t) X(int8_t) X(int16_t) X(int32_t) X(uint32_t) X(int64_t) X(uint64_t) X(float) X(double)
