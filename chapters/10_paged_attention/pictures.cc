#include "chapters/10_paged_attention/pictures.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "common/check.h"

namespace book::kv {
namespace {

constexpr int kCell = 9;    // one token slot
constexpr int kGap = 6;     // between blocks
constexpr int kRow = 46;    // between sequence rows
constexpr int kLabel = 78;  // label column
constexpr int kPanelGap = 40;

// One colour per sequence row (cells and lines); orange marks a shared physical block.
const char* kRowColours[] = {"#3b6fb0", "#2e9a4a", "#8a46b0", "#b0703a", "#b03a5a", "#3aa0a8"};
constexpr const char* kShared = "#f2a65a";

const char* row_colour(std::size_t row) { return kRowColours[row % std::size(kRowColours)]; }

int block_width(int block_size) { return block_size * kCell; }

// Draws one block of `block_size` cells at (x, y): a frame filled with `fill`, and `filled` cells
// shaded in `cells`.
void draw_block(std::ostringstream& svg, int x, int y, int block_size, int filled, const char* fill,
                const char* cells) {
  svg << "<rect x='" << x << "' y='" << y << "' width='" << block_width(block_size) << "' height='"
      << kCell * 2 << "' fill='" << fill << "' stroke='#333'/>\n";
  for (int s = 0; s < filled; ++s)
    svg << "<rect x='" << x + s * kCell + 1 << "' y='" << y + 1 << "' width='" << kCell - 2
        << "' height='" << kCell * 2 - 2 << "' fill='" << cells << "' opacity='0.7'/>\n";
}

struct PanelSize {
  int width, height;
};

PanelSize measure(const PicturePanel& panel) {
  const int bs = panel.manager->block_size();
  std::size_t longest = 0;
  for (const SequenceId id : panel.sequences)
    longest = std::max(longest, panel.manager->block_table(id).size());
  const int pool = panel.manager->num_blocks() * (block_width(bs) + kGap);
  const int rows = static_cast<int>(longest) * (block_width(bs) + kGap) + kLabel;
  return {std::max(pool + kLabel, rows) + 10,
          40 + static_cast<int>(panel.sequences.size()) * kRow + 90};
}

void draw_panel(std::ostringstream& svg, const PicturePanel& panel, int x0) {
  const BlockManager& m = *panel.manager;
  const int bs = m.block_size(), step = block_width(bs) + kGap;
  const int pool_y = 40 + static_cast<int>(panel.sequences.size()) * kRow + 30;
  svg << "<text x='" << x0 << "' y='16' font-size='13' font-weight='bold'>" << panel.caption
      << "</text>\n";
  std::map<BlockId, int> filled;         // physical block -> slots holding tokens
  std::map<BlockId, std::size_t> owner;  // physical block -> (a) row that holds it
  // Lines first, boxes on top: a line passing under another row's block is hidden by it.
  for (std::size_t r = 0; r < panel.sequences.size(); ++r) {
    const BlockTable& table = m.block_table(panel.sequences[r]);
    const int y = 40 + static_cast<int>(r) * kRow, length = m.length(panel.sequences[r]);
    for (std::size_t b = 0; b < table.size(); ++b) {
      filled[table[b]] =
          std::max(filled[table[b]], std::min(bs, length - static_cast<int>(b) * bs));
      owner.emplace(table[b], r);
      const int x = x0 + kLabel + static_cast<int>(b) * step + block_width(bs) / 2;
      const int px = x0 + kLabel + table[b] * step + block_width(bs) / 2;
      svg << "<line x1='" << x << "' y1='" << y + 2 * kCell << "' x2='" << px << "' y2='" << pool_y
          << "' stroke='" << row_colour(r) << "' stroke-width='1.2' opacity='0.8'/>\n";
    }
  }
  for (std::size_t r = 0; r < panel.sequences.size(); ++r) {
    const BlockTable& table = m.block_table(panel.sequences[r]);
    const int y = 40 + static_cast<int>(r) * kRow, length = m.length(panel.sequences[r]);
    svg << "<text x='" << x0 << "' y='" << y + 14 << "' font-size='11' fill='" << row_colour(r)
        << "'>" << panel.labels[r] << "</text>\n";
    for (std::size_t b = 0; b < table.size(); ++b)
      draw_block(svg, x0 + kLabel + static_cast<int>(b) * step, y, bs,
                 std::min(bs, length - static_cast<int>(b) * bs), "#ffffff", row_colour(r));
  }
  svg << "<text x='" << x0 << "' y='" << pool_y + 14 << "' font-size='11'>pool</text>\n";
  for (BlockId b = 0; b < m.num_blocks(); ++b) {
    const int x = x0 + kLabel + b * step, refs = m.ref_count(b);
    const char* cells = refs > 1 ? kShared : owner.contains(b) ? row_colour(owner[b]) : "#999";
    draw_block(svg, x, pool_y, bs, filled.contains(b) ? filled[b] : 0,
               refs > 1 ? "#fde3c8" : "#ffffff", cells);
    svg << "<text x='" << x + block_width(bs) / 2 << "' y='" << pool_y + 2 * kCell + 12
        << "' font-size='9' text-anchor='middle'>" << b
        << (refs > 1 ? " ×" + std::to_string(refs) : "") << "</text>\n";
  }
}

}  // namespace

std::string block_tables_svg(std::span<const PicturePanel> panels) {
  int width = 0, height = 0;
  for (const PicturePanel& panel : panels) {
    BOOK_CHECK(panel.manager != nullptr,
               "block_tables_svg: panel '" << panel.caption << "' has no manager");
    BOOK_CHECK(panel.labels.size() == panel.sequences.size(),
               "block_tables_svg: panel '" << panel.caption << "' has " << panel.sequences.size()
                                           << " sequences but " << panel.labels.size()
                                           << " labels");
    const PanelSize size = measure(panel);
    width += size.width + kPanelGap;
    height = std::max(height, size.height);
  }
  std::ostringstream svg;
  width = std::max(width, 560);
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height + 26
      << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n";
  int x = 4;
  for (const PicturePanel& panel : panels) {
    draw_panel(svg, panel, x);
    x += measure(panel).width + kPanelGap;
  }
  svg << "<text x='4' y='" << height + 4
      << "' font-size='10'>Each row is a sequence's block table; a line joins a logical block to "
         "the physical block it names.</text>\n<text x='4' y='"
      << height + 18
      << "' font-size='10'>Shaded cells hold a token's K and V; orange: shared by several tables "
         "(×n references), copied before a write.</text>\n</svg>\n";
  return svg.str();
}

}  // namespace book::kv
