// Small helpers around RapidJSON: reading a file with precise error messages, and
// shortest round-trip formatting of doubles.
#pragma once
#include <string>

#include <rapidjson/document.h>

#include "cost/types.h"

namespace mlsys {

// Reads `path` and parses it as JSON. Throws InputError("<what>: ...") naming the file,
// or the offset and line of a syntax error.
// Reads a whole file; throws InputError("<what>: cannot open 'path': <errno text>").
std::string readTextFile(const std::string& path, const std::string& what);
rapidjson::Document parseJsonFile(const std::string& path, const std::string& what);
rapidjson::Document parseJsonText(const std::string& text, const std::string& what);

// Shortest decimal string that reads back as the same double ("6553.6", not "6553.6000000000004").
std::string formatDouble(double v);

// Requires member `key` of object `obj` (context names the enclosing object for messages).
const rapidjson::Value& requireMember(const rapidjson::Value& obj, const char* key,
                                      const std::string& context);
// Reads a JSON integer (not 3.0, not "3") within [lo, hi]; `field` names it in errors.
i64 requireInt(const rapidjson::Value& v, const std::string& field, i64 lo, i64 hi);

}  // namespace mlsys
