/// @file
/// Aligned buffers and non-owning matrix views.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>

#include "common/check.h"

namespace book {

/// A heap array of `T` aligned to `Alignment` bytes (64: one cache line, two AVX2 registers).
/// Owns its memory; movable, not copyable. Elements are left uninitialised, as in a real kernel.
template <typename T, std::size_t Alignment = 64>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;

  /// Allocates `size` elements (uninitialised).
  explicit AlignedBuffer(std::size_t size) : size_(size) {
    if (size == 0) return;
    const std::size_t bytes = (size * sizeof(T) + Alignment - 1) / Alignment * Alignment;
    void* raw = std::aligned_alloc(Alignment, bytes);
    if (raw == nullptr) throw std::bad_alloc();
    data_.reset(static_cast<T*>(raw));
  }

  /// Allocates `size` elements, each set to `value`.
  AlignedBuffer(std::size_t size, const T& value) : AlignedBuffer(size) {
    for (std::size_t i = 0; i < size; ++i) data_.get()[i] = value;
  }

  T* data() { return data_.get(); }                     ///< First element.
  const T* data() const { return data_.get(); }         ///< First element.
  std::size_t size() const { return size_; }             ///< Number of elements.
  T& operator[](std::size_t i) { return data_.get()[i]; }              ///< Unchecked access.
  const T& operator[](std::size_t i) const { return data_.get()[i]; }  ///< Unchecked access.
  std::span<T> span() { return {data_.get(), size_}; }                 ///< All elements.
  std::span<const T> span() const { return {data_.get(), size_}; }     ///< All elements.
  T* begin() { return data_.get(); }                                   ///< For range-for.
  T* end() { return data_.get() + size_; }                             ///< For range-for.
  const T* begin() const { return data_.get(); }                       ///< For range-for.
  const T* end() const { return data_.get() + size_; }                 ///< For range-for.

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0;
};

/// A row-major matrix view: `rows` × `cols` elements, row i starting at `data + i * ld`.
/// `ld` (the leading dimension) may exceed `cols`, as when viewing a block of a larger matrix.
template <typename T>
struct MatrixView {
  T* data = nullptr;     ///< Element (0, 0).
  std::size_t rows = 0;  ///< Number of rows.
  std::size_t cols = 0;  ///< Number of columns.
  std::size_t ld = 0;    ///< Distance in elements between the starts of two rows (≥ cols).

  /// Element (i, j), unchecked.
  T& operator()(std::size_t i, std::size_t j) const { return data[i * ld + j]; }

  /// The sub-matrix of `r` × `c` elements starting at (i, j), checked.
  MatrixView block(std::size_t i, std::size_t j, std::size_t r, std::size_t c) const {
    BOOK_CHECK(i + r <= rows && j + c <= cols, "block (" << i << "," << j << ")+" << r << "x" << c
                                                         << " leaves a " << rows << "x" << cols
                                                         << " matrix");
    return {data + i * ld + j, r, c, ld};
  }
};

}  // namespace book
