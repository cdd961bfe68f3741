// Rung 10's bit-level rules on the CPU: the wgmma matrix descriptor's bit fields, the 128-byte
// swizzle, that what TMA writes is what the kernel's descriptors make wgmma read (element by
// element, through the PTX ISA's canonical layouts), the accumulator fragment, when TMA may be
// used, and rung 10's schedule. No GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/schedule.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "chapters/02_gemm_cuda/wgmma.h"
#include "tests/02_gemm_cuda/schedule_checks.h"

namespace book::gemm_cuda {
namespace {

using W = WgmmaTile;

TEST(WgmmaTile, SizesFitHopperSharedMemoryAndTheSwizzle) {
  EXPECT_EQ(W::kThreads, 384);
  EXPECT_EQ(W::kBK * 2, W::kSwizzleBytes) << "a stage's K must be one 128-byte swizzled row";
  EXPECT_EQ(W::kStageBytes, 32768);
  EXPECT_EQ(W::kStageABytes % W::kAtomBytes, 0);
  EXPECT_EQ(W::kBSlabBytes % W::kAtomBytes, 0);
  EXPECT_EQ(W::kConsumers * W::kInstrM, W::kBM);
  EXPECT_EQ(W::kInstrN, W::kBN);
  EXPECT_LE(W::kSmemBytes, 227 * 1024) << "over the 227 KiB a Hopper block may opt in to";
  EXPECT_LE(W::kBoxCols, 256) << "TMA box dimensions are at most 256";
  EXPECT_LE(W::kBM, 256);
}

// The PTX ISA's layout of the 64-bit descriptor: start address, LBO and SBO each as
// (x & 0x3FFFF) >> 4 in bits 0–13, 16–29 and 32–45; base offset in 49–51; swizzle in 62–63.
TEST(WgmmaDescriptor, PacksEachFieldInItsBits) {
  EXPECT_EQ(wgmma_descriptor(0, 0, 0, WgmmaSwizzle::kNone), 0u);
  EXPECT_EQ(wgmma_descriptor(16, 0, 0, WgmmaSwizzle::kNone), 1u);
  EXPECT_EQ(wgmma_descriptor(0x3FFF0, 0, 0, WgmmaSwizzle::kNone), 0x3FFFu);
  EXPECT_EQ(wgmma_descriptor(0x40000, 0, 0, WgmmaSwizzle::kNone), 0u) << "only 18 address bits";
  EXPECT_EQ(wgmma_descriptor(0, 16, 0, WgmmaSwizzle::kNone), 1ull << 16);
  EXPECT_EQ(wgmma_descriptor(0, 0, 16, WgmmaSwizzle::kNone), 1ull << 32);
  EXPECT_EQ(wgmma_descriptor(0, 0, 0, WgmmaSwizzle::k128B), 1ull << 62);
  EXPECT_EQ(wgmma_descriptor(0, 0, 0, WgmmaSwizzle::k32B), 3ull << 62);
  // A worked example: start 0x1400, LBO 8192, SBO 1024, 128-byte swizzle.
  const std::uint64_t d = wgmma_descriptor(0x1400, 8192, 1024, WgmmaSwizzle::k128B);
  EXPECT_EQ(d & 0x3FFF, 0x140u);
  EXPECT_EQ((d >> 16) & 0x3FFF, 512u);
  EXPECT_EQ((d >> 32) & 0x3FFF, 64u);
  EXPECT_EQ((d >> 49) & 0x7, 0u);
  EXPECT_EQ(d >> 62, 1u);
  // Nothing outside the fields.
  constexpr std::uint64_t kFields =
      0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 | 0x7ull << 49 | 0x3ull << 62;
  EXPECT_EQ(wgmma_descriptor(0x3FFF0, 0x3FFF0, 0x3FFF0, WgmmaSwizzle::k32B) & ~kFields, 0u);
}

TEST(WgmmaDescriptor, DecodesWhatItEncodes) {
  for (std::uint32_t start : {0u, 1024u, 0x1F400u, 0x3FFF0u})
    for (std::uint32_t lbo : {16u, 8192u})
      for (std::uint32_t sbo : {1024u, 2048u}) {
        const WgmmaDescriptorFields f =
            wgmma_decode(wgmma_descriptor(start, lbo, sbo, WgmmaSwizzle::k64B));
        EXPECT_EQ(f.start_address, start);
        EXPECT_EQ(f.leading_bytes, lbo);
        EXPECT_EQ(f.stride_bytes, sbo);
        EXPECT_EQ(f.base_offset, 0u);
        EXPECT_EQ(f.swizzle, WgmmaSwizzle::k64B);
      }
}

// 128-byte swizzle: the 16-byte chunk index (address bits 4–6) XOR the row in the 1024-byte
// atom (bits 7–9). Row 0 is unchanged, row r moves chunk c to c ^ r, bytes inside a chunk
// stay together, and each atom is permuted onto itself.
TEST(Swizzle128B, XorsTheChunkWithTheRowInsideEach1024ByteAtom) {
  for (std::uint32_t x = 0; x < 128; ++x) EXPECT_EQ(swizzle_128b(x), x);
  EXPECT_EQ(swizzle_128b(1 * 128 + 0 * 16), 1u * 128 + 1 * 16);
  EXPECT_EQ(swizzle_128b(3 * 128 + 5 * 16 + 7), 3u * 128 + (5 ^ 3) * 16 + 7);
  EXPECT_EQ(swizzle_128b(7 * 128 + 7 * 16), 7u * 128 + 0 * 16);
  EXPECT_EQ(swizzle_128b(1024 + 2 * 128 + 16), 1024u + 2 * 128 + 3 * 16) << "repeats every 1024";
  for (std::uint32_t atom : {0u, 1024u, 7168u}) {
    std::set<std::uint32_t> seen;
    for (std::uint32_t x = atom; x < atom + 1024; ++x) {
      const std::uint32_t y = swizzle_128b(x);
      EXPECT_EQ(y / 1024, x / 1024) << "leaves its atom: " << x;
      EXPECT_EQ(y % 16, x % 16) << "splits a 16-byte chunk: " << x;
      EXPECT_EQ(y / 128, x / 128) << "leaves its 128-byte row: " << x;
      seen.insert(y);
    }
    EXPECT_EQ(seen.size(), 1024u) << "not a permutation of atom " << atom;
  }
  // The point of it: one 16-byte column of 8 rows lands in 8 different chunks (all 32 banks).
  for (std::uint32_t column = 0; column < 8; ++column) {
    std::set<std::uint32_t> chunks;
    for (std::uint32_t row = 0; row < 8; ++row)
      chunks.insert((swizzle_128b(row * 128 + column * 16) % 128) / 16);
    EXPECT_EQ(chunks.size(), 8u) << "column " << column;
  }
}

// The heart of the rung: TMA writes A's 128 × 64 box and B's two 64 × 64 boxes row-major with
// the 128-byte swizzle; the kernel's descriptors, read through the PTX ISA's canonical layouts,
// must address exactly those elements, for every stage, consumer warpgroup and K slice.
TEST(WgmmaOperands, DescriptorsReadExactlyWhatTmaWrote) {
  const std::uint32_t ring = 3 * 1024;  // a 1024-aligned shared address, not 0
  int mismatches = 0;
  for (int stage = 0; stage < W::kStages; ++stage) {
    const std::uint32_t a_stage = ring + stage * W::kStageBytes;
    const std::uint32_t b_stage = a_stage + W::kStageABytes;
    std::set<std::uint32_t> a_read, b_read;
    for (int kk = 0; kk < W::kBK / W::kInstrK; ++kk) {
      for (int consumer = 0; consumer < W::kConsumers; ++consumer) {
        const std::uint64_t d = wgmma_a_descriptor(a_stage, consumer, kk);
        for (int m = 0; m < W::kInstrM; ++m)
          for (int k = 0; k < W::kInstrK; ++k) {
            const int row = consumer * W::kInstrM + m, col = kk * W::kInstrK + k;
            const std::uint32_t read = wgmma_operand_address(d, false, m, k);
            const std::uint32_t written = tma_box_address(a_stage, row, col);
            a_read.insert(read);
            if (read != written && ++mismatches <= 5)
              ADD_FAILURE() << "A stage " << stage << " consumer " << consumer << " kk " << kk
                            << ": wgmma reads A(" << row << "," << col << ") at " << read
                            << ", TMA wrote it at " << written;
          }
      }
      const std::uint64_t d = wgmma_b_descriptor(b_stage, kk);
      for (int n = 0; n < W::kInstrN; ++n)
        for (int k = 0; k < W::kInstrK; ++k) {
          const int row = kk * W::kInstrK + k, slab = n / W::kBoxCols;
          const std::uint32_t read = wgmma_operand_address(d, true, n, k);
          const std::uint32_t written =
              tma_box_address(b_stage + slab * W::kBSlabBytes, row, n - wgmma_b_box_col(slab));
          b_read.insert(read);
          if (read != written && ++mismatches <= 5)
            ADD_FAILURE() << "B stage " << stage << " kk " << kk << ": wgmma reads B(" << row << ","
                          << n << ") at " << read << ", TMA wrote it at " << written;
        }
    }
    // Over a stage's K slices the instructions read every element of both tiles exactly once.
    EXPECT_EQ(a_read.size(), std::size_t(W::kBM * W::kBK)) << "stage " << stage;
    EXPECT_EQ(b_read.size(), std::size_t(W::kBK * W::kBN)) << "stage " << stage;
    EXPECT_EQ(*a_read.begin() % 2, 0u);
    EXPECT_GE(*a_read.begin(), a_stage);
    EXPECT_LT(*a_read.rbegin(), b_stage);
    EXPECT_GE(*b_read.begin(), b_stage);
    EXPECT_LT(*b_read.rbegin(), a_stage + W::kStageBytes);
  }
  EXPECT_EQ(mismatches, 0);
}

// An independent anchor for wgmma_operand_address(), which the test above trusts: the PTX ISA's
// table of canonical layouts (9.7.15.5.1.2.1.3, "Canonical Layouts"), written as CuTe shapes and
// strides in elements, evaluated generically, first against the worked examples NVIDIA gives
// under that table (so that which stride is LBO and which is SBO is read the way NVIDIA reads it),
// then — for the 128-byte swizzle rows — against the header's hand-expanded formula, for the
// kernel's own descriptors.
struct Mode {  // a CuTe mode (s0, s1, s2) : (d0, d1, d2); the last extent is unbounded
  int shape[3];
  int stride[3];
  int offset(int i) const {
    return (i % shape[0]) * stride[0] + ((i / shape[0]) % shape[1]) * stride[1] +
           (i / (shape[0] * shape[1])) * stride[2];
  }
};
struct CanonicalLayout {
  Mode mn, k;
  int offset(int mn_index, int k_index) const { return mn.offset(mn_index) + k.offset(k_index); }
};

// The table's rows, for T elements per 16 bytes, `chunks` 16-byte chunks per swizzle row (0: no
// swizzle) and LBO / SBO in elements.
CanonicalLayout ptx_canonical(bool mn_major, int chunks, int t, int lbo, int sbo) {
  if (mn_major) {
    if (chunks == 0) return {{{t, 1, 1 << 20}, {1, t, sbo}}, {{8, 1 << 20, 1}, {t, lbo, 0}}};
    return {{{t, chunks, 1 << 20}, {1, t, lbo}}, {{8, 1 << 20, 1}, {chunks * t, sbo, 0}}};
  }
  if (chunks == 0) return {{{8, 1 << 20, 1}, {t, sbo, 0}}, {{t, 1 << 20, 1}, {1, lbo, 0}}};
  return {{{8, 1 << 20, 1}, {chunks * t, sbo, 0}}, {{t, 1 << 20, 1}, {1, t, 0}}};
}

TEST(WgmmaOperands, CanonicalLayoutTableReproducesThePtxWorkedExamples) {
  // One example: its parameters (T; LBO and SBO in elements) and its "exact layout".
  const auto check = [](const char* name, bool mn_major, int chunks, int t, int lbo, int sbo,
                        Mode exact_mn, Mode exact_k, int mn_extent) {
    const CanonicalLayout table = ptx_canonical(mn_major, chunks, t, lbo, sbo);
    for (int mn = 0; mn < mn_extent; ++mn)
      for (int k = 0; k < 16; ++k)
        ASSERT_EQ(table.offset(mn, k), exact_mn.offset(mn) + exact_k.offset(k))
            << name << ": element (" << mn << "," << k << ")";
  };
  check("K-major, no swizzle, tf32", false, 0, 4, 64, 32, {{8, 2, 1}, {4, 32, 0}},
        {{4, 4, 1}, {1, 64, 0}}, 16);
  check("K-major, 32B swizzle, tf32", false, 2, 4, 0, 64, {{8, 2, 1}, {8, 64, 0}},
        {{4, 4, 1}, {1, 4, 0}}, 16);
  check("MN-major, no swizzle, bf16", true, 0, 8, 128, 64, {{8, 1, 2}, {1, 8, 64}},
        {{8, 2, 1}, {8, 128, 0}}, 16);
  check("MN-major, 32B swizzle, bf16", true, 2, 8, 128, 256, {{8, 2, 2}, {1, 8, 128}},
        {{8, 2, 1}, {16, 256, 0}}, 32);
  check("MN-major, 64B swizzle, bf16", true, 4, 8, 256, 512, {{8, 4, 2}, {1, 8, 256}},
        {{8, 2, 1}, {32, 512, 0}}, 64);
  // And the examples tell the strides apart: with LBO and SBO swapped the 64B row is wrong.
  const CanonicalLayout swapped = ptx_canonical(true, 4, 8, 512, 256);
  const Mode exact_mn{{8, 4, 2}, {1, 8, 256}}, exact_k{{8, 2, 1}, {32, 512, 0}};
  EXPECT_NE(swapped.offset(32, 0), exact_mn.offset(32) + exact_k.offset(0));
  EXPECT_NE(swapped.offset(0, 8), exact_mn.offset(0) + exact_k.offset(8));
}

TEST(WgmmaOperands, HeaderModelIsTheTablesRowFor128ByteSwizzle) {
  const std::uint32_t a_stage = 5 * 1024, b_stage = a_stage + W::kStageABytes;
  for (int kk = 0; kk < W::kBK / W::kInstrK; ++kk) {
    const std::uint64_t descriptors[3] = {wgmma_a_descriptor(a_stage, 0, kk),
                                          wgmma_a_descriptor(a_stage, 1, kk),
                                          wgmma_b_descriptor(b_stage, kk)};
    for (int which = 0; which < 3; ++which) {
      const bool mn_major = which == 2;  // A is K-major; B (row-major K × N) is MN-major
      const WgmmaDescriptorFields f = wgmma_decode(descriptors[which]);
      // LBO and SBO in BF16 elements, as the table takes them.
      const CanonicalLayout table =
          ptx_canonical(mn_major, 8, 8, static_cast<int>(f.leading_bytes / 2),
                        static_cast<int>(f.stride_bytes / 2));
      const int mn_extent = mn_major ? W::kInstrN : W::kInstrM;
      for (int mn = 0; mn < mn_extent; ++mn)
        for (int k = 0; k < W::kInstrK; ++k) {
          const std::uint32_t from_table =
              swizzle_128b(f.start_address + 2u * static_cast<std::uint32_t>(table.offset(mn, k)));
          ASSERT_EQ(wgmma_operand_address(descriptors[which], mn_major, mn, k), from_table)
              << (mn_major ? "B" : "A") << " kk " << kk << " element (" << mn << "," << k << ")";
        }
    }
  }
}

TEST(WgmmaOperands, DescriptorFieldsAreTheOnesTheLayoutNeeds) {
  const WgmmaDescriptorFields a = wgmma_decode(wgmma_a_descriptor(4096, 1, 3));
  EXPECT_EQ(a.start_address, 4096u + 64 * 128 + 3 * 32) << "rows 64–127, 48 elements in";
  EXPECT_EQ(a.stride_bytes, 1024u) << "8 rows of 128 bytes";
  EXPECT_EQ(a.swizzle, WgmmaSwizzle::k128B);
  EXPECT_EQ(a.base_offset, 0u);
  const WgmmaDescriptorFields b = wgmma_decode(wgmma_b_descriptor(4096, 2));
  EXPECT_EQ(b.start_address, 4096u + 32 * 128) << "32 rows of K in";
  EXPECT_EQ(b.leading_bytes, 8192u) << "the next 64 columns: the second box";
  EXPECT_EQ(b.stride_bytes, 1024u) << "the next 8 rows of K";
  EXPECT_EQ(b.swizzle, WgmmaSwizzle::k128B);
  // A descriptor's start moved inside a 1024-byte atom keeps bits 7–9 of the atom's start
  // (zero), which is why base_offset stays 0.
  for (int kk = 0; kk < 4; ++kk)
    EXPECT_EQ((wgmma_decode(wgmma_a_descriptor(8192, 0, kk)).start_address >> 7) & 7, 0u);
}

// The FP32 accumulator fragment of m64nNk16: every element of the 64 × 128 result is held by
// exactly one (thread, register); warp w holds rows 16w–16w+15; and the layout is rung 9's
// mma.sync m16n8 layout, tiled.
TEST(WgmmaAccumulator, CoversTheResultOnceInThePtxLayout) {
  std::vector<int> held(W::kInstrM * W::kInstrN, 0);
  for (int t = 0; t < W::kWarpgroup; ++t)
    for (int reg = 0; reg < W::kAccumulators; ++reg) {
      const Coord e = wgmma_accumulator(t, reg);
      ASSERT_TRUE(e.row >= 0 && e.row < W::kInstrM && e.col >= 0 && e.col < W::kInstrN)
          << "thread " << t << " reg " << reg << " -> (" << e.row << "," << e.col << ")";
      ++held[e.row * W::kInstrN + e.col];
      EXPECT_EQ(e.row / 16, t / 32) << "thread " << t << " reg " << reg;
      // Rung 9's map for warp 0 of its block, fragment (0, reg / 4), register reg % 4.
      const Coord m16n8 = mma_output(t % 32, 0, 0, reg % 4);
      EXPECT_EQ(e.row, 16 * (t / 32) + m16n8.row);
      EXPECT_EQ(e.col, 8 * (reg / 4) + m16n8.col);
    }
  for (std::size_t i = 0; i < held.size(); ++i)
    EXPECT_EQ(held[i], 1) << "C(" << i / W::kInstrN << "," << i % W::kInstrN << ")";
  // Spot values from the PTX ISA's figure: thread 0 holds d0, d1 = (0,0), (0,1), d2, d3 =
  // (8,0), (8,1), d4 = (0,8); thread 5 (g = 1, q = 1) holds d0 = (1,2); thread 32: (16,0).
  EXPECT_EQ(wgmma_accumulator(0, 1).col, 1);
  EXPECT_EQ(wgmma_accumulator(0, 2).row, 8);
  EXPECT_EQ(wgmma_accumulator(0, 4).col, 8);
  EXPECT_EQ(wgmma_accumulator(5, 0).row, 1);
  EXPECT_EQ(wgmma_accumulator(5, 0).col, 2);
  EXPECT_EQ(wgmma_accumulator(32, 0).row, 16);
  EXPECT_EQ(wgmma_accumulator(127, 63).row, 63);
  EXPECT_EQ(wgmma_accumulator(127, 63).col, 127);
}

TEST(WgmmaTma, UsedOnlyWhereRowsAreMultiplesOf16BytesAndPointersAligned) {
  EXPECT_EQ(wgmma_tma_unsupported({1, 8, 8}, 0, 256), nullptr);
  EXPECT_EQ(wgmma_tma_unsupported({517, 392, 264}, 256, 512), nullptr) << "ragged m is fine";
  const char* k_reason = wgmma_tma_unsupported({64, 64, 60}, 0, 0);
  ASSERT_NE(k_reason, nullptr);
  EXPECT_NE(std::string(k_reason).find("k is not a multiple of 8"), std::string::npos);
  const char* n_reason = wgmma_tma_unsupported({64, 65, 64}, 0, 0);
  ASSERT_NE(n_reason, nullptr);
  EXPECT_NE(std::string(n_reason).find("n is not"), std::string::npos);
  EXPECT_NE(wgmma_tma_unsupported({64, 64, 64}, 8, 0), nullptr);
  EXPECT_NE(wgmma_tma_unsupported({64, 64, 64}, 0, 2), nullptr);
}

// Rung 10's schedule: at TMA shapes each stage's boxes fill the 128 × 64 and 64 × 128 tiles
// exactly once (the parts outside the matrix as zero fills), and the consumers' accumulators
// write every element of C exactly once; elsewhere it is rung 9's schedule, as in the launcher.
TEST(WgmmaSchedule, CoversTilesAndWritesCOnceAtTmaAndFallbackShapes) {
  const auto rungs = ladder_schedules();
  const RungSchedule& rung = testing::find_rung(rungs, 10);
  for (GemmShape s : std::vector<GemmShape>{
           {1, 8, 8}, {129, 136, 200}, {64, 264, 72}, {256, 128, 64}, {33, 47, 19}, {7, 300, 9}})
    testing::expect_exact_cover(rung, s);
  const LaunchGeometry tma = rung.geometry({129, 136, 200});
  EXPECT_EQ(tma.block.x, W::kThreads);
  EXPECT_EQ(tma.k_tile, W::kBK);
  EXPECT_EQ(tma.k_steps, 4) << "200 = 3 full stages of 64 and one of 8 (zero-filled to 64)";
  EXPECT_EQ(tma.grid.x, 2);
  EXPECT_EQ(tma.grid.y, 2);
  const LaunchGeometry fallback = rung.geometry({129, 136, 201});
  EXPECT_EQ(fallback.block.x, TensorTile::kThreads) << "k = 201 must fall back to rung 9";
}

TEST(WgmmaSchedule, TmaMovesEachTileOncePerBlockAtFullWidth) {
  const auto rungs = ladder_schedules();
  const RungSchedule& rung = testing::find_rung(rungs, 10);
  const GemmShape s{256, 384, 192};
  const Traffic t = count_traffic(rung, s);
  EXPECT_EQ(t.a_elements + t.b_elements, tiled_input_elements(s, W::kBM, W::kBN));
  EXPECT_EQ(t.a_sectors * 32, t.a_elements * 2) << "whole 128-byte box rows: no partial sectors";
  EXPECT_EQ(t.b_sectors * 32, t.b_elements * 2);
  EXPECT_EQ(t.c_elements, std::int64_t(s.m) * s.n);
  // Per block and stage: 16 KiB of A and 16 KiB of B, the expect-tx count of the full barrier.
  const Traffic one_block = count_traffic_by_block(rung, s);
  const std::int64_t blocks = 2 * 3, stages = 3;
  EXPECT_EQ(one_block.a_elements * 2 / (blocks * stages), W::kStageABytes);
  EXPECT_EQ(one_block.b_elements * 2 / (blocks * stages), W::kBSlabs * W::kBSlabBytes);
}

}  // namespace
}  // namespace book::gemm_cuda
