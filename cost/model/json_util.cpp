#include "cost/model/json_util.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace mlsys {
namespace {

// Iterative: the default recursive parser overflows the stack on deeply nested input (a crash,
// not an error) before any handler could stop it. Default number parsing: RapidJSON 1.1.0's
// full-precision path reads out of bounds on some long literals (found by fuzzing). Doubles may
// then differ from the text by one ulp; the only doubles we read are reported latencies,
// compared with a tolerance.
constexpr unsigned kParseFlags = rapidjson::kParseDefaultFlags | rapidjson::kParseIterativeFlag;

// The stream rapidjson::Document::Parse(str, len) uses: no terminating NUL needed, offsets
// count from the first byte of the text.
using Stream = rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream>;

bool isNumberChar(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

std::string where(std::string_view text, size_t off) {
  const size_t line = 1 + std::count(text.begin(), text.begin() + std::min(off, text.size()), '\n');
  return " at line " + std::to_string(line) + " (offset " + std::to_string(off) + ")";
}

// SAX filter between the reader and the Document: counts nesting (and stops the parse before the
// DOM gets deep: walking it, e.g. to quote a literal, is recursive), rejects duplicate keys, skips the
// values of top-level keys not in `keep` without storing them, and records where each double
// literal ends so that errors can quote it as written.
class Filter {
 public:
  Filter(rapidjson::Document& out, const Stream& is, std::string_view text,
         std::initializer_list<std::string_view> keep, std::vector<size_t>& double_ends,
         const std::function<bool()>& stop)
      : out_(out), is_(is), text_(text), keep_(keep), double_ends_(double_ends), stop_(stop) {}

  bool Null() { return skipping() ? endScalar() : out_.Null(); }
  bool Bool(bool b) { return skipping() ? endScalar() : out_.Bool(b); }
  bool Int(int i) { return skipping() ? endScalar() : out_.Int(i); }
  bool Uint(unsigned u) { return skipping() ? endScalar() : out_.Uint(u); }
  bool Int64(int64_t i) { return skipping() ? endScalar() : out_.Int64(i); }
  bool Uint64(uint64_t u) { return skipping() ? endScalar() : out_.Uint64(u); }
  bool Double(double d) {
    if (skipping()) return endScalar();
    double_ends_.push_back(is_.Tell());  // the reader calls us right after the literal
    return out_.Double(d);
  }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return false; }  // not requested
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return skipping() ? endScalar() : out_.String(s, n, copy);
  }
  bool StartObject() {
    if (!enter()) return false;
    if (skipping()) return true;
    keys_.emplace_back();
    return out_.StartObject();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    if (skipping()) return true;  // keys inside a skipped value are not stored, so not checked
    const std::string_view k(s, n);
    if (!keys_.back().emplace(k).second) return fail("duplicate key \"" + std::string(k) + "\"", keyStart());
    if (depth_ == 1 && keep_.size() != 0 && std::find(keep_.begin(), keep_.end(), k) == keep_.end()) {
      skip_at_ = depth_;
      ++skipped_members_;
      return true;
    }
    return out_.Key(s, n, copy);
  }
  bool EndObject(rapidjson::SizeType n) {
    --depth_;
    if (skipping()) return leave();
    keys_.pop_back();
    // Only the top-level object has skipped members; the Document expects the stored count.
    return out_.EndObject(depth_ == 0 ? n - skipped_members_ : n);
  }
  bool StartArray() {
    if (!enter()) return false;
    if (skipping()) return true;
    if (depth_ == 1 && keep_.size() != 0) {  // a top-level array where an object is expected:
      skip_at_ = 0;                          // store a null instead (rejected as not an object)
      return out_.Null();
    }
    return out_.StartArray();
  }
  bool EndArray(rapidjson::SizeType n) {
    --depth_;
    return skipping() ? leave() : out_.EndArray(n);
  }

  bool failed() const { return !error_.empty(); }
  bool stopped() const { return stopped_; }
  const std::string& error() const { return error_; }
  size_t errorOffset() const { return error_offset_; }

 private:
  bool skipping() const { return skip_at_ >= 0; }
  // A scalar (or a container closing) back at the level of the skipped key ends its value.
  bool endScalar() {
    if (depth_ == skip_at_) skip_at_ = -1;
    return true;
  }
  bool leave() { return endScalar(); }
  bool enter() {
    if (stop_ && (++enters_ & 4095) == 0 && stop_()) {
      stopped_ = true;
      return false;
    }
    if (++depth_ > kMaxJsonDepth)  // called before the reader takes the bracket
      return fail("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", is_.Tell());
    return true;
  }
  bool fail(std::string why, size_t off) {
    error_ = std::move(why);
    error_offset_ = off;
    return false;
  }
  // Offset of the opening quote of the key just read (the stream is past its closing quote).
  size_t keyStart() const {
    size_t i = is_.Tell() - 1;
    while (i > 0) {
      --i;
      if (text_[i] != '"') continue;
      size_t bs = 0;
      while (i > bs && text_[i - 1 - bs] == '\\') ++bs;
      if (bs % 2 == 0) return i;
    }
    return i;
  }

  rapidjson::Document& out_;
  const Stream& is_;
  std::string_view text_;
  std::initializer_list<std::string_view> keep_;
  std::vector<size_t>& double_ends_;
  int depth_ = 0;     // open arrays and objects, stored or skipped
  int skip_at_ = -1;  // while skipping a value: the depth of its container (0: the root), else -1
  rapidjson::SizeType skipped_members_ = 0;
  std::vector<std::unordered_set<std::string>> keys_;  // per open stored object
  std::string error_;
  size_t error_offset_ = 0;
  const std::function<bool()>& stop_;
  long enters_ = 0;
  bool stopped_ = false;
};

// Counts the doubles before `target` in document order (the order Filter recorded them in).
// Recursion is bounded by kMaxJsonDepth.
bool doublesBefore(const rapidjson::Value& v, const rapidjson::Value* target, size_t& count) {
  if (&v == target) return true;
  if (v.IsDouble()) ++count;
  else if (v.IsArray()) {
    for (const auto& e : v.GetArray())
      if (doublesBefore(e, target, count)) return true;
  } else if (v.IsObject()) {
    for (const auto& m : v.GetObject())
      if (doublesBefore(m.value, target, count)) return true;
  }
  return false;
}

}  // namespace

JsonDoc parseJsonDoc(const std::string& text, const std::string& what, std::initializer_list<std::string_view> keep,
                     const std::function<bool()>& stop) {
  JsonDoc d;
  d.text = text;
  rapidjson::MemoryStream ms(text.data(), text.size());
  Stream is(ms);
  Filter filter(d.doc, is, d.text, keep, d.double_ends, stop);
  rapidjson::Reader reader;
  rapidjson::ParseResult result;
  auto generate = [&](rapidjson::Document&) {
    result = reader.Parse<kParseFlags>(is, filter);
    return !result.IsError();
  };
  d.doc.Populate(generate);
  if (filter.stopped()) throw ReadInterrupted(what + ": reading was interrupted");
  if (filter.failed()) throw InputError(what + ": " + filter.error() + where(text, filter.errorOffset()));
  if (result.IsError()) {
    rapidjson::ParseErrorCode code = result.Code();
    // The iterative reader calls any bad first token "The document is empty." (the recursive one
    // said "Invalid value.").
    if (code == rapidjson::kParseErrorDocumentEmpty &&
        text.find_first_not_of(" \t\r\n", result.Offset()) != std::string::npos)
      code = rapidjson::kParseErrorValueInvalid;
    std::ostringstream os;
    os << what << ": not valid JSON" << where(text, result.Offset()) << ": " << rapidjson::GetParseError_En(code);
    throw InputError(os.str());
  }
  // The stream reads a NUL byte as the end of the text: anything from a NUL on is refused (a NUL
  // after the document, or one where a value should be).
  if (size_t nul = text.find('\0'); nul != std::string::npos)
    throw InputError(what + ": not valid JSON" + where(text, nul) + ": a NUL byte");
  return d;
}

rapidjson::Document parseJsonText(const std::string& text, const std::string& what) {
  return std::move(parseJsonDoc(text, what).doc);
}

std::string readTextFile(const std::string& path, const std::string& what, const ReadLimits& lim) {
  const auto now = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const double give_up = lim.give_up_at > 0 ? lim.give_up_at : now() + 10;
  const auto tooLarge = [&](double bytes, bool atLeast) {
    return InputError(what + " '" + printable(path) + "': " + (atLeast ? "more than " : "") +
                      std::to_string(static_cast<long long>(bytes)) + " bytes, over the input limit of " +
                      std::to_string(static_cast<long long>(lim.max_bytes)) + " bytes (" + lim.raise_hint + ")");
  };
  // O_NONBLOCK: opening a FIFO for reading does not wait for a writer (poll below waits, bounded).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw InputError(what + ": cannot open '" + printable(path) + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0)
    throw InputError(what + ": cannot open '" + printable(path) + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(what + ": cannot open '" + printable(path) + "': it is a directory");
  const bool regular = S_ISREG(st.st_mode);
  if (regular && static_cast<double>(st.st_size) > lim.max_bytes)
    throw tooLarge(static_cast<double>(st.st_size), false);
  // Straight into one string sized from the file (a stringstream would hold the text twice).
  std::string text;
  if (regular) text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    if (!regular) {
      const double left = give_up - now();
      pollfd pf{fd, POLLIN, 0};
      int n = left > 0 ? ::poll(&pf, 1, static_cast<int>(std::min(left * 1000 + 1, 1e9))) : 0;
      if (n < 0 && errno == EINTR) continue;
      if (n == 0)
        throw InputError(
            what + " '" + printable(path) + "': " +
            (text.empty() ? std::string("no data")
                          : "no end of data (" + std::to_string(text.size()) + " bytes read)") +
            " within the time limit: a FIFO or pipe whose writer does not write or close, or a device that never ends");
    }
    ssize_t k = ::read(fd, buf, sizeof buf);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw InputError(what + ": cannot read '" + printable(path) + "': " + std::strerror(errno));
    }
    if (k == 0) break;
    if (static_cast<double>(text.size()) + static_cast<double>(k) > lim.max_bytes)
      throw tooLarge(static_cast<double>(text.size()) + static_cast<double>(k), true);
    text.append(buf, static_cast<size_t>(k));
  }
  return text;
}

std::string printable(std::string_view s, size_t max) {
  std::string out;
  const size_t n = std::min(s.size(), max);
  out.reserve(n);
  char hex[8];
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max) out += "... (" + std::to_string(s.size()) + " bytes in all)";
  return out;
}

rapidjson::Document parseJsonFile(const std::string& path, const std::string& what) {
  const std::string text = readTextFile(path, what);
  return parseJsonText(text, what + " '" + path + "'");
}

std::string formatDouble(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string JsonDoc::literal(const rapidjson::Value& v) const {
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  size_t ord = 0;
  if (v.IsDouble() && doublesBefore(doc, &v, ord) && ord < double_ends.size() && double_ends[ord] <= text.size()) {
    const size_t end = double_ends[ord];
    size_t begin = end;
    while (begin > 0 && isNumberChar(text[begin - 1])) --begin;
    if (begin < end) return std::string(text.substr(begin, end - begin));
  }
  return v.IsNumber() ? formatDouble(v.GetDouble()) : std::string("?");
}

void JsonDoc::intError(const rapidjson::Value& v, const std::string& field, i64 lo, i64 hi, const char* noun) const {
  const std::string head = field + ": " + noun;
  const std::string range = " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.IsNumber()) throw InputError(head + "must be an integer");
  const std::string lit = literal(v);
  // An integer literal beyond 64 bits is read as a double: it is out of range, not a fraction.
  // (Smaller doubles come from fractions or exponents: 128.0, 1e2.)
  const bool bigInteger =
      std::fabs(v.GetDouble()) >= 0x1p63 && lit.find_first_not_of("-0123456789") == std::string::npos;
  if (v.IsInt64() || v.IsUint64() || bigInteger) throw InputError(head + lit + range);
  throw InputError(head + "must be an integer, got " + lit);
}

const rapidjson::Value& requireMember(const rapidjson::Value& obj, const char* key, const std::string& context) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) throw InputError(context + ": missing key \"" + key + "\"");
  return it->value;
}

i64 requireInt(const rapidjson::Value& v, const std::string& field, i64 lo, i64 hi) {
  static const JsonDoc none;  // no source text: literals fall back to formatDouble
  return none.requireInt(v, lo, hi, [&] { return field; });
}

// A file name may hold any bytes; JSON text must be UTF-8: invalid sequences become U+FFFD.
std::string validUtf8(const std::string& s) {
  struct In {  // the input stream RapidJSON's UTF8<>::Validate reads
    using Ch = char;
    const char* p;
    const char* end;
    Ch Peek() const { return p < end ? *p : '\0'; }
    Ch Take() { return p < end ? *p++ : '\0'; }
  };
  struct Out {
    using Ch = char;
    std::string& s;
    void Put(Ch c) { s.push_back(c); }
  };
  std::string o;
  o.reserve(s.size());
  In in{s.data(), s.data() + s.size()};
  while (in.p < in.end) {
    const char* start = in.p;
    std::string ch;
    Out out{ch};
    if (rapidjson::UTF8<>::Validate(in, out)) {
      o += ch;
    } else {
      o += "\xEF\xBF\xBD";
      in.p = start + 1;  // the next byte may start a valid sequence
    }
  }
  return o;
}

}  // namespace mlsys
