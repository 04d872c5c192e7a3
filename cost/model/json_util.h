// Small helpers around RapidJSON: reading a file with precise error messages, hardened parsing
// (bounded nesting, no duplicate keys, unknown top-level keys skipped), integers quoted as
// written in errors, and shortest round-trip formatting of doubles.
#pragma once
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "cost/model/types.h"

namespace mlsys {

// Deepest nesting accepted (the top-level value is level 1). Problems need 3 levels and schedules
// 3; the limit keeps hostile input from exhausting the stack or memory.
inline constexpr int kMaxJsonDepth = 64;

// Reads a whole file within `lim`; throws InputError("<what>: cannot open 'path': <errno text>"),
// "<what> 'path': larger than the input limit ..." or "... no data within ...". Opens never block:
// a FIFO is opened non-blocking and waited for (poll) until the limit.
std::string readTextFile(const std::string& path, const std::string& what, const ReadLimits& lim = {});

// A parsed document that can quote its numbers as written in the source text ("128.0", "1e2").
struct JsonDoc {
  rapidjson::Document doc;
  std::string_view text;            // the parsed text (owned by the caller of parseJsonDoc)
  std::vector<size_t> double_ends;  // end offset in `text` of each non-integer number, in document order

  // The literal of number `v` (a value of `doc`) as written; formatDouble() if not found.
  std::string literal(const rapidjson::Value& v) const;

  // Reads a JSON integer (not 3.0, not "3") within [lo, hi]. `field()` (a string) names it in
  // errors; it is called only on error, so loops over big arrays build no strings. `noun`
  // prefixes the message: "<field>: <noun>must be an integer, got 128.0".
  template <class Field>
  i64 requireInt(const rapidjson::Value& v, i64 lo, i64 hi, const Field& field, const char* noun = "") const {
    if (v.IsInt64()) {
      const i64 x = v.GetInt64();
      if (x >= lo && x <= hi) return x;
    }
    intError(v, field(), lo, hi, noun);
  }
  [[noreturn]] void intError(const rapidjson::Value& v, const std::string& field, i64 lo, i64 hi,
                             const char* noun = "") const;
};

// Parses `text` as JSON. Throws InputError("<what>: ...") with the line and offset of a syntax
// error, of nesting deeper than kMaxJsonDepth, or of a duplicate key in any stored object.
// When `keep` is not empty and the top level is an object, top-level members with other keys
// are checked for syntax, depth and repetition of the key but not stored (unknown keys of a
// huge file cost no memory). The JsonDoc refers to `text`, which must outlive it.
// `stop` (when set) is polled about every 4,096 arrays and objects: when it returns true the
// parse ends with ReadInterrupted.
JsonDoc parseJsonDoc(const std::string& text, const std::string& what,
                     std::initializer_list<std::string_view> keep = {}, const std::function<bool()>& stop = {});
JsonDoc parseJsonDoc(std::string&& text, const std::string& what, std::initializer_list<std::string_view> keep = {},
                     const std::function<bool()>& stop = {}) = delete;

// The same checks, keeping every member; for callers that need no literals.
rapidjson::Document parseJsonFile(const std::string& path, const std::string& what);
rapidjson::Document parseJsonText(const std::string& text, const std::string& what);

// `s` fit for a one-line message: control bytes (NUL among them) as \xNN, and past `max` bytes
// cut, with the full size named.
std::string printable(std::string_view s, size_t max = 200);

// `s` as valid UTF-8: invalid sequences become U+FFFD (what JSON writers must do with a name of any
// bytes; a reader comparing names compares through it).
std::string validUtf8(const std::string& s);

// Shortest decimal string that reads back as the same double ("6553.6", not "6553.6000000000004").
std::string formatDouble(double v);

// Requires member `key` of object `obj` (context names the enclosing object for messages).
const rapidjson::Value& requireMember(const rapidjson::Value& obj, const char* key, const std::string& context);
// Reads a JSON integer (not 3.0, not "3") within [lo, hi]; `field` names it in errors. Prefer
// JsonDoc::requireInt, which quotes a non-integer as written.
i64 requireInt(const rapidjson::Value& v, const std::string& field, i64 lo, i64 hi);

}  // namespace mlsys
