#include "cost/model/model.h"

#include "cost/model/types.h"

namespace mlsys {

int ModelOptions::index(size_t option) const {
  switch (option) {
    case 0: return static_cast<int>(matmul_compute);
    case 1: return static_cast<int>(matmul_chains);
    default: return static_cast<int>(k_limit);
  }
}

void ModelOptions::setIndex(size_t option, int value) {
  switch (option) {
    case 0: matmul_compute = static_cast<MatmulCompute>(value); break;
    case 1: matmul_chains = static_cast<MatmulChains>(value); break;
    default: k_limit = static_cast<KLimit>(value); break;
  }
}

std::string ModelOptions::describe() const {
  std::string out;
  for (size_t i = 0; i < kOptions.size(); ++i)
    out += std::string(i ? " " : "") + kOptions[i].key + "=" + kOptions[i].values[static_cast<size_t>(index(i))];
  return out;
}

std::string ModelOptions::choicesText() {
  std::string out;
  for (size_t i = 0; i < kOptions.size(); ++i)
    out += std::string(i ? ", " : "") + kOptions[i].key + "=" + kOptions[i].values[0] + "|" + kOptions[i].values[1];
  return out;
}

namespace {
size_t optionIndex(const std::string& key) {
  for (size_t i = 0; i < ModelOptions::kOptions.size(); ++i)
    if (key == ModelOptions::kOptions[i].key) return i;
  std::string known;
  for (const auto& o : ModelOptions::kOptions) known += std::string(known.empty() ? "" : ", ") + o.key;
  throw InputError("unknown model option \"" + key + "\" (known: " + known + ")");
}
}  // namespace

void ModelOptions::set(const std::string& key, const std::string& value) {
  const size_t i = optionIndex(key);
  const auto& names = kOptions[i].values;
  for (size_t v = 0; v < names.size(); ++v)
    if (value == names[v]) {
      setIndex(i, static_cast<int>(v));
      return;
    }
  throw InputError("model option " + key + ": unknown value \"" + value + "\" (expected " + names[0] + " or " +
                   names[1] + ")");
}

std::string ModelOptions::value(const std::string& key) const {
  const size_t i = optionIndex(key);
  return kOptions[i].values[static_cast<size_t>(index(i))];
}

void ModelOptions::setAssignment(const std::string& kv) {
  auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("model option \"" + kv + "\": expected KEY=VALUE, e.g. matmul_compute=native_depth");
  set(kv.substr(0, eq), kv.substr(eq + 1));
}

}  // namespace mlsys
