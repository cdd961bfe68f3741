#include "tools/json.h"

#include <cctype>

#include "common/check.h"

namespace book::tools {

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Json document() {
    Json value = parse_value();
    skip_space();
    BOOK_CHECK(pos_ == text_.size(), "JSON: unexpected text at offset " << pos_);
    return value;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char peek() {
    skip_space();
    BOOK_CHECK(pos_ < text_.size(), "JSON: the text ends too early");
    return text_[pos_];
  }
  void expect(char c) {
    BOOK_CHECK(peek() == c, "JSON: expected '" << c << "' at offset " << pos_ << ", got '"
                                               << text_[pos_] << "'");
    ++pos_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Json parse_value() {
    Json v;
    const char c = peek();
    if (c == '{') {
      v.kind = Json::Kind::kObject;
      ++pos_;
      if (peek() == '}') return ++pos_, v;
      while (true) {
        const std::string key = parse_string();
        expect(':');
        v.members[key] = parse_value();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Json::Kind::kArray;
      ++pos_;
      if (peek() == ']') return ++pos_, v;
      while (true) {
        v.items.push_back(parse_value());
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::Kind::kString;
      v.text = parse_string();
      return v;
    }
    if (literal("true")) return v.kind = Json::Kind::kBool, v.boolean = true, v;
    if (literal("false")) return v.kind = Json::Kind::kBool, v;
    if (literal("null")) return v;
    const std::size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[pos_])) ||
            std::string_view("+-.eE").find(text_[pos_]) != std::string_view::npos))
      ++pos_;
    BOOK_CHECK(pos_ > start, "JSON: unexpected '" << c << "' at offset " << start);
    v.kind = Json::Kind::kNumber;
    v.text = std::string(text_.substr(start, pos_ - start));
    return v;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  unsigned hex4() {
    BOOK_CHECK(pos_ + 4 <= text_.size(), "JSON: a \\u escape is cut off");
    const unsigned code =
        static_cast<unsigned>(std::stoul(std::string(text_.substr(pos_, 4)), nullptr, 16));
    pos_ += 4;
    return code;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      BOOK_CHECK(pos_ < text_.size(), "JSON: a string is not closed");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      BOOK_CHECK(pos_ < text_.size(), "JSON: a string ends in a backslash");
      const char e = text_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          unsigned code = hex4();
          if (code >= 0xD800 && code < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            code = 0x10000 + ((code - 0xD800) << 10) + (hex4() - 0xDC00);
          }
          append_utf8(out, code);
          break;
        }
        default:
          out += e;  // \" \\ \/
      }
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

const Json& Json::operator[](const std::string& key) const {
  static const Json null;
  if (kind != Kind::kObject) return null;
  const auto it = members.find(key);
  return it == members.end() ? null : it->second;
}

bool Json::has(const std::string& key) const {
  return kind == Kind::kObject && members.count(key) > 0;
}

Json parse_json(std::string_view text) { return Parser(text).document(); }

}  // namespace book::tools
