// mlsys generate --family F --size N [--seed S] [-o FILE]: writes a generated problem as JSON.
#include <cctype>
#include <iostream>
#include <stdexcept>
#include <string_view>

#include <cxxopts.hpp>

#include "cost/model/json_util.h"
#include "engine/cli/commands.h"
#include "engine/generate/generator.h"
#include "engine/io/files.h"

namespace mlsys {

constexpr int kMaxGenerateOps = 2000000;

int cmdGenerate(int argc, char** argv) {
  std::string fams;
  for (const auto& f : generatorFamilies()) fams += (fams.empty() ? "" : "|") + f;
  cxxopts::Options o("mlsys generate", "Write a generated problem in the contest input format.");
  o.add_options()("f,family", "Graph family: " + fams, cxxopts::value<std::string>())(
      "n,size", "Approximate number of ops (1 to 2,000,000)", cxxopts::value<int>())(
      "seed", "Random seed (the output depends only on family, size and seed)",
      cxxopts::value<uint64_t>()->default_value("1"))("o,output", "Output file (written atomically); default: stdout",
                                                      cxxopts::value<std::string>())("h,help", "Show help");
  const std::string usage = "usage: mlsys generate --family " + fams + " --size N [--seed S] [-o FILE]";
  auto usageError = [&](const std::string& msg) { return UsageError(msg + "\n" + usage); };
  // -s is --seconds in every mlsys command; generate has no time budget (the seed was -s once).
  for (int i = 1; i < argc; ++i)
    if (std::string_view a = argv[i]; a == "-s" || (a.size() > 2 && a.substr(0, 2) == "-s" &&
                                                    (std::isdigit(static_cast<unsigned char>(a[2])) || a[2] == '=')))
      throw usageError("generate has no -s (in mlsys, -s is --seconds); the seed is --seed S");
  auto r = parseOrThrow(o, argc, argv);
  if (r.count("help"))
    return printHelp(o, "generate",
                     "Examples:\n"
                     "  mlsys generate --family transformer --size 40 --seed 3 -o t40.json\n"
                     "  mlsys generate -f odd-k -n 12 | mlsys bound /dev/stdin\n");
  if (!r.unmatched().empty()) throw usageError("unexpected argument '" + r.unmatched().front() + "'");
  if (!r.count("family")) throw usageError("--family is required");
  if (!r.count("size")) throw usageError("--size is required");
  if (r["size"].as<int>() < 1) throw usageError("--size must be >= 1");
  // About 1 KB of memory per op while generating: 2M ops is ~2 GB (a larger --size would grow
  // without bound before anything is written).
  if (r["size"].as<int>() > kMaxGenerateOps)
    throw usageError("--size must be at most " + std::to_string(kMaxGenerateOps));
  Problem p;
  try {
    p = generateProblem(r["family"].as<std::string>(), r["size"].as<int>(), r["seed"].as<uint64_t>());
  } catch (const InputError& e) {
    throw usageError(e.what());  // an unknown family is a usage error
  }
  const std::string json = problemToJson(p);
  if (r.count("output")) {
    try {
      writeFileAtomic(r["output"].as<std::string>(), json);
    } catch (const std::exception& e) {
      std::cerr << "mlsys generate: error: " << e.what() << "\n";
      return 1;
    }
  } else {
    std::cout << json;
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "mlsys generate: error: cannot write to stdout\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace mlsys
