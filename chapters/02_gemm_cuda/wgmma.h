/// @file
/// Rung 10's bit-level rules, as plain C++ that both nvcc (inside the Hopper kernel) and g++ (the
/// CPU tests) compile: the tile sizes, the 128-byte swizzle that TMA applies when it writes a
/// tile to shared memory, the 64-bit shared-memory matrix descriptor that `wgmma.mma_async`
/// reads its operands through, the canonical layouts the PTX ISA defines for those descriptors,
/// and which element of C each accumulator register of a warpgroup holds.
///
/// Written from NVIDIA's documentation (PTX ISA, "Asynchronous Warpgroup Level Matrix
/// Multiply-Accumulate": matrix descriptor format, canonical layouts, register fragments; CUDA
/// driver API, cuTensorMapEncodeTiled). The CPU tests check that what TMA writes is exactly what
/// the descriptors make wgmma read, element by element — the part of rung 10 most likely to be
/// wrong, checked without a GPU.
#pragma once

#include <cstdint>

#include "chapters/02_gemm_cuda/index.h"
#include "chapters/02_gemm_cuda/schedule.h"

namespace book::gemm_cuda {

/// Rung 10's tiles (BF16 inputs, FP32 accumulation): a 128 × 128 block tile, 64 deep, in a ring
/// of 4 shared-memory stages; one producer warpgroup (one thread of it issues the TMA copies)
/// and two consumer warpgroups, each computing 64 rows × 128 columns with
/// `wgmma.mma_async.m64n128k16`.
struct WgmmaTile {
  static constexpr int kBM = 128;         ///< Rows of C per block.
  static constexpr int kBN = 128;         ///< Columns of C per block.
  static constexpr int kBK = 64;          ///< K per stage: one 128-byte row of BF16.
  static constexpr int kStages = 4;       ///< Depth of the TMA → wgmma ring.
  static constexpr int kWarpgroup = 128;  ///< Threads in a warpgroup (4 warps).
  static constexpr int kConsumers = 2;    ///< Consumer warpgroups.
  static constexpr int kThreads = kWarpgroup * (1 + kConsumers);  ///< 384.
  static constexpr int kInstrM = 64;                              ///< M of one wgmma instruction.
  static constexpr int kInstrN = 128;                             ///< N of one wgmma instruction.
  static constexpr int kInstrK = 16;  ///< K of one wgmma instruction (BF16).
  static constexpr int kAccumulators = kInstrM * kInstrN / kWarpgroup;  ///< 64 floats a thread.
  static constexpr int kSwizzleBytes = 128;               ///< The swizzle span: one shared row.
  static constexpr int kBoxCols = kSwizzleBytes / 2;      ///< 64 BF16: a TMA box's row.
  static constexpr int kAtomBytes = 8 * kSwizzleBytes;    ///< 1024: the swizzle pattern repeats.
  static constexpr int kStageABytes = kBM * kBK * 2;      ///< 16384: one A box, 128 × 64.
  static constexpr int kBSlabBytes = kBK * kBoxCols * 2;  ///< 8192: one B box, 64 × 64.
  static constexpr int kBSlabs = kBN / kBoxCols;          ///< 2 B boxes per stage.
  static constexpr int kStageBytes = kStageABytes + kBSlabs * kBSlabBytes;  ///< 32768.
  /// Dynamic shared memory: the ring, plus slack to align it to the 1024-byte swizzle atom.
  static constexpr int kSmemBytes = kStages * kStageBytes + kAtomBytes;  // 132096
};

// ---- The 128-byte swizzle (TMA's CU_TENSOR_MAP_SWIZZLE_128B; wgmma's swizzle mode 1).

/// Where the 128-byte swizzle moves the byte at shared-memory address `address`: the 16-byte
/// chunk index (bits 4–6) is XORed with the index of the 128-byte row within its 1024-byte
/// atom (bits 7–9). Eight rows of one column of 16-byte chunks land in eight different chunk
/// positions, so a column read touches all 32 banks once. The pattern is a function of the
/// address, so tiles must start on a 1024-byte boundary for row 0 of the tile to be row 0 of
/// the pattern.
BOOK_HD constexpr std::uint32_t swizzle_128b(std::uint32_t address) {
  return address ^ (((address >> 7) & 7u) << 4);
}

/// Where TMA (128-byte swizzle) puts element (row, col) of a BF16 box whose rows are 128 bytes
/// (64 elements), for a box written at `box_address` (1024-byte aligned): row-major, then
/// swizzled.
BOOK_HD constexpr std::uint32_t tma_box_address(std::uint32_t box_address, int row, int col) {
  return swizzle_128b(box_address + static_cast<std::uint32_t>(row) * WgmmaTile::kSwizzleBytes +
                      static_cast<std::uint32_t>(col) * 2u);
}

// ---- The wgmma shared-memory matrix descriptor.

/// The swizzle field of a wgmma matrix descriptor (bits 62–63).
enum class WgmmaSwizzle : std::uint32_t {
  kNone = 0,  ///< no swizzle (interleaved core matrices)
  k128B = 1,  ///< 128-byte swizzle
  k64B = 2,   ///< 64-byte swizzle
  k32B = 3,   ///< 32-byte swizzle
};

/// The fields of a matrix descriptor, in bytes (decoded).
struct WgmmaDescriptorFields {
  std::uint32_t start_address = 0;  ///< Shared-memory address of the operand's first element.
  std::uint32_t leading_bytes = 0;  ///< Leading-dimension byte offset (LBO).
  std::uint32_t stride_bytes = 0;   ///< Stride-dimension byte offset (SBO).
  std::uint32_t base_offset = 0;    ///< Bits 49–51: swizzle phase, 0 for 1024-aligned patterns.
  WgmmaSwizzle swizzle = WgmmaSwizzle::kNone;  ///< Bits 62–63.
};

/// The PTX ISA's `matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4`: addresses and offsets are
/// stored in units of 16 bytes, 14 bits each.
BOOK_HD constexpr std::uint64_t wgmma_encode_field(std::uint32_t bytes) {
  return (bytes & 0x3FFFFu) >> 4;
}

/// Packs a descriptor: start address in bits 0–13, LBO in 16–29, SBO in 32–45, base offset 0 in
/// 49–51, swizzle mode in 62–63 (all other bits zero).
BOOK_HD constexpr std::uint64_t wgmma_descriptor(std::uint32_t start_address,
                                                 std::uint32_t leading_bytes,
                                                 std::uint32_t stride_bytes, WgmmaSwizzle swizzle) {
  return wgmma_encode_field(start_address) | wgmma_encode_field(leading_bytes) << 16 |
         wgmma_encode_field(stride_bytes) << 32 |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(swizzle)) << 62;
}

/// Unpacks a descriptor (the inverse of wgmma_descriptor() for 16-byte multiples below 256 KiB).
BOOK_HD constexpr WgmmaDescriptorFields wgmma_decode(std::uint64_t descriptor) {
  WgmmaDescriptorFields f;
  f.start_address = static_cast<std::uint32_t>(descriptor & 0x3FFF) << 4;
  f.leading_bytes = static_cast<std::uint32_t>((descriptor >> 16) & 0x3FFF) << 4;
  f.stride_bytes = static_cast<std::uint32_t>((descriptor >> 32) & 0x3FFF) << 4;
  f.base_offset = static_cast<std::uint32_t>((descriptor >> 49) & 0x7);
  f.swizzle = static_cast<WgmmaSwizzle>(static_cast<std::uint32_t>(descriptor >> 62) & 0x3);
  return f;
}

/// The address wgmma reads element (mn, k) of a BF16 operand from, for a descriptor with the
/// 128-byte swizzle — the PTX ISA's canonical layouts, in elements with T = 8 BF16 (16 bytes):
///
///     K-major  (A, and B stored N × K):   ((8, m), (T, 2k)) : ((8T, SBO), (1, T))
///     MN-major (B stored K × N, "trans"): ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO))
///
/// K-major: rows of 128 bytes, 8 rows per 1024-byte atom, atoms SBO apart along M; the 16
/// elements of K an instruction reads are consecutive in the (unswizzled) row, and LBO is not
/// used. MN-major: 64 elements of N are one 128-byte row, 8 rows (consecutive k) per atom, atoms
/// SBO apart along K and LBO apart along N. The swizzle is then applied to the whole address.
/// A model of the hardware as documented, for the tests; the kernel never calls it.
BOOK_HD constexpr std::uint32_t wgmma_operand_address(std::uint64_t descriptor, bool mn_major,
                                                      int mn, int k) {
  const WgmmaDescriptorFields f = wgmma_decode(descriptor);
  const auto u = [](int x) { return static_cast<std::uint32_t>(x); };
  std::uint32_t offset = 0;
  if (!mn_major) {
    offset = u(mn % 8) * 128 + u(mn / 8) * f.stride_bytes + u(k % 8) * 2 + u(k / 8) * 16;
  } else {
    offset = u(mn % 8) * 2 + u((mn / 8) % 8) * 16 + u(mn / 64) * f.leading_bytes + u(k % 8) * 128 +
             u(k / 8) * f.stride_bytes;
  }
  return swizzle_128b(f.start_address + offset);
}

/// Rung 10's descriptor for A: consumer warpgroup `consumer` reads rows 64·consumer … +63 of the
/// stage's 128 × 64 A tile (K-major, as TMA wrote it), K slice `kk` (16 elements, 32 bytes
/// into each 128-byte row). SBO = 1024: the next 8 rows. LBO is unused for a swizzled K-major
/// operand; 16 (encoded 1) is the conventional filler.
BOOK_HD constexpr std::uint64_t wgmma_a_descriptor(std::uint32_t a_stage_address, int consumer,
                                                   int kk) {
  return wgmma_descriptor(
      a_stage_address +
          static_cast<std::uint32_t>(consumer * WgmmaTile::kInstrM * WgmmaTile::kSwizzleBytes) +
          static_cast<std::uint32_t>(kk * WgmmaTile::kInstrK * 2),
      16, WgmmaTile::kAtomBytes, WgmmaSwizzle::k128B);
}

/// Rung 10's descriptor for B: the stage's 64 × 128 B tile, stored as two 64 × 64 boxes (TMA
/// boxes are at most 128 bytes wide under this swizzle) 8192 bytes apart; K slice `kk` starts 16
/// rows (2048 bytes) into each. B is row-major K × N, i.e. MN-major: wgmma reads it with its
/// transpose bit set. LBO = 8192 (the next 64 columns), SBO = 1024 (the next 8 rows of K).
BOOK_HD constexpr std::uint64_t wgmma_b_descriptor(std::uint32_t b_stage_address, int kk) {
  return wgmma_descriptor(b_stage_address + static_cast<std::uint32_t>(kk * WgmmaTile::kInstrK *
                                                                       WgmmaTile::kSwizzleBytes),
                          WgmmaTile::kBSlabBytes, WgmmaTile::kAtomBytes, WgmmaSwizzle::k128B);
}

/// The column of the B tile where B box `slab` (0 or 1) starts: the kernel asks TMA for the box
/// at global column col0 + this, and the schedule counts the same boxes.
BOOK_HD constexpr int wgmma_b_box_col(int slab) { return slab * WgmmaTile::kBoxCols; }

// ---- The accumulator fragment of wgmma .m64nNk16 with FP32 accumulation.

/// The element of the warpgroup's 64 × N result that accumulator register `reg` (0 … N/2 − 1)
/// of thread `thread` (0–127 within the warpgroup) holds. PTX ISA layout: warp w of the
/// warpgroup owns rows 16w … 16w + 15; within it, lane = 4·g + q holds, for every 8 columns
/// 8j … 8j + 7, registers 4j … 4j + 3 at (g, 2q), (g, 2q + 1), (g + 8, 2q), (g + 8, 2q + 1) —
/// the mma.sync m16n8 layout of rung 9, repeated across N.
BOOK_HD constexpr Coord wgmma_accumulator(int thread, int reg) {
  const int warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * ((reg / 2) % 2), 8 * (reg / 4) + 2 * (lane % 4) + reg % 2};
}

// ---- The ring: which stage a K tile uses, and which mbarrier phase each side waits for.
// An mbarrier counts its completed phases; `try_wait.parity P` returns once the latest phase of
// parity P has completed (on a fresh barrier, parity 1 — "the phase before the first" — counts
// as completed). K tile kt is the (kt / kStages)-th use of its stage.

/// The stage of the ring that K tile `kt` goes through.
BOOK_HD constexpr int wgmma_stage(int kt) { return kt % WgmmaTile::kStages; }

/// The parity a consumer waits for on the stage's *full* barrier before reading K tile `kt`:
/// that of the stage's (kt / kStages)-th completed fill.
BOOK_HD constexpr unsigned wgmma_full_parity(int kt) {
  return static_cast<unsigned>(kt / WgmmaTile::kStages) & 1u;
}

/// Whether the producer must wait on the stage's *empty* barrier before loading K tile `kt`:
/// not on a stage's first use.
BOOK_HD constexpr bool wgmma_producer_waits(int kt) { return kt >= WgmmaTile::kStages; }

/// The parity the producer waits for on the *empty* barrier before loading K tile `kt`: that of
/// the consumers' release of K tile kt − kStages, the stage's previous use.
BOOK_HD constexpr unsigned wgmma_empty_parity(int kt) {
  return static_cast<unsigned>(kt / WgmmaTile::kStages - 1) & 1u;
}

// ---- When TMA can be used at all.

/// Why rung 10 cannot load this problem with TMA (nullptr if it can). cuTensorMapEncodeTiled
/// needs a 16-byte-aligned base address and row strides that are multiples of 16 bytes: for
/// row-major BF16, k (A's row) and n (B's row) multiples of 8. The launcher then runs rung 9
/// instead (it says so); everything else — ragged tiles at any m, n, k — TMA handles by zero
/// fill on the way in, the epilogue by masking on the way out.
inline const char* wgmma_tma_unsupported(GemmShape shape, std::uintptr_t a, std::uintptr_t b) {
  if (shape.k % 8 != 0) return "k is not a multiple of 8 (A's rows are not 16-byte multiples)";
  if (shape.n % 8 != 0) return "n is not a multiple of 8 (B's rows are not 16-byte multiples)";
  if (a % 16 != 0 || b % 16 != 0) return "A or B does not start on a 16-byte boundary";
  return nullptr;
}

}  // namespace book::gemm_cuda
