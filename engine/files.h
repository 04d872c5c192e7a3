// Output files: atomic replacement of regular files.
#pragma once
#include <string>

namespace mlsys {

// Writes `content` to `path` atomically: `<path>.tmp.<pid>` in the same directory, fsync, rename.
// Throws std::runtime_error with errno text on failure.
void writeFileAtomic(const std::string& path, const std::string& content);

}  // namespace mlsys
