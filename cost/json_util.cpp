#include "cost/json_util.h"


#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <rapidjson/error/en.h>

namespace mlsys {

rapidjson::Document parseJsonText(const std::string& text, const std::string& what) {
  rapidjson::Document doc;
  // Default number parsing: RapidJSON 1.1.0's full-precision path reads out of bounds on some
  // long literals (found by fuzzing). Doubles may then differ from the text by one ulp; the only
  // doubles we read are reported latencies, compared with a tolerance.
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError()) {
    size_t off = doc.GetErrorOffset();
    size_t line = 1;
    for (size_t i = 0; i < off && i < text.size(); ++i)
      if (text[i] == '\n') ++line;
    std::ostringstream os;
    os << what << ": not valid JSON at line " << line << " (offset " << off
       << "): " << rapidjson::GetParseError_En(doc.GetParseError());
    throw InputError(os.str());
  }
  return doc;
}

std::string readTextFile(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(what + ": cannot open '" + path + "': it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what + ": cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(what + ": cannot read '" + path + "'");
  return ss.str();
}

rapidjson::Document parseJsonFile(const std::string& path, const std::string& what) {
  return parseJsonText(readTextFile(path, what), what + " '" + path + "'");
}

std::string formatDouble(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

const rapidjson::Value& requireMember(const rapidjson::Value& obj, const char* key,
                                      const std::string& context) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd())
    throw InputError(context + ": missing key \"" + key + "\"");
  return it->value;
}

i64 requireInt(const rapidjson::Value& v, const std::string& field, i64 lo, i64 hi) {
  if (!v.IsInt64()) {
    if (v.IsNumber())
      throw InputError(field + ": must be an integer, got " + formatDouble(v.GetDouble()));
    throw InputError(field + ": must be an integer");
  }
  i64 x = v.GetInt64();
  if (x < lo || x > hi)
    throw InputError(field + ": " + std::to_string(x) + " is out of range [" + std::to_string(lo) +
                     ", " + std::to_string(hi) + "]");
  return x;
}

}  // namespace mlsys
