/// @file
/// The text of an exercise's reference body, as its catalog entry points to it: a whole file, a
/// `//! [name]` snippet of it, or one function in it. The progress tool prints it (only after the
/// reader's version passes); the docs check looks for its lines in the generated site.
#pragma once

#include <string>
#include <vector>

#include "common/exercise_catalog.h"

namespace book::tools {

/// The part of `source` that `symbol` names: the lines between the two `//! [symbol]` markers if
/// there are any; otherwise the definition of the function `symbol` (from the comment lines above
/// its first line to the `}` that closes it at the same indentation); the whole text when
/// `symbol` is empty.
/// @throws book::Error when `symbol` is neither a snippet nor a function defined in `source`.
std::string extract_reference(const std::string& source, const std::string& symbol,
                              const std::string& path);

/// The reference text of `exercise`, every part of it in catalog order, each part headed by its
/// file (and symbol), read from under `root`.
/// @throws book::Error when a file cannot be read or a symbol is not found in it.
std::string reference_text(const Exercise& exercise, const std::string& root);

/// The lines of `text` that would give the answer away if the book showed them: code lines
/// (comments included) of at least `min_length` characters after whitespace is collapsed, not
/// `#include`, `namespace`, lone braces, nor lines of the exercise's stub files or its chapter's
/// headers (those are the statement, not the answer). Whitespace collapsed, so they compare
/// with a page's text.
std::vector<std::string> telling_lines(const std::string& text,
                                       const std::vector<std::string>& statement_texts,
                                       std::size_t min_length = 20);

/// `line` with runs of whitespace made one space and the ends trimmed.
std::string collapse_space(const std::string& line);

}  // namespace book::tools
