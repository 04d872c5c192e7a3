// What the user's documents name exists (issue 35). Every flag (`--name`, `-x`) that README.md or
// engine/cli/REFERENCE.md writes must be in the --help of the command it is written for (a command
// line `mlsys CMD ...`, `CMD --flag`, or the first cell of a flag table under a heading that names
// one command), and any other flag in the --help of at least one command (`mlsys --help`
// included). Every dotted config key (`search.seconds`, `sa.moves.merge`) must be a path of
// `mlsys solve --print-config`. Flags of other programs (`cmake --preset`, `python3 bench/tune.py
// --minutes`) are left alone. The links of the four documents must reach a file and a heading that
// exist, and the user's guide stays short, its contents table first.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace mlsys {
namespace {

using Strings = std::vector<std::string>;

const Strings kCommands = {"solve", "evaluate", "bound", "report", "generate", "import"};
// Programs whose flags are not mlsys's (a program written with a '/' is one too, unless it is mlsys).
bool isOtherProgram(const std::string& name) {
  static const std::string kPrograms =
      " apt-get bash cd clang-format cmake cpack ctest dpkg-query env gdb git ldd make ninja nice optuna-dashboard pip"
      " psql python python3 readelf run-clang-tidy-14 runuser sh sudo tar taskset time valgrind ";
  return kPrograms.find(" " + name + " ") != std::string::npos;
}

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }
bool isCommand(const std::string& word) {
  for (const std::string& c : kCommands)
    if (c == word) return true;
  return false;
}

// `word` appears in `text` as a whole word (not inside `--seconds` for `-s`, nor `--seeds` for `--seed`).
bool mentions(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !isWordChar(text[at - 1])) && (end == text.size() || !isWordChar(text[end]))) return true;
  }
  return false;
}

// The flags in `text`: `--name` or `-x`, at the start or after a space, bracket, quote, comma or bar.
Strings flagsIn(const std::string& text) {
  Strings out;
  const std::string before = " \t([{`,|\"'";
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '-' || (i > 0 && before.find(text[i - 1]) == std::string::npos)) continue;
    const auto alpha = [&](size_t k) { return k < text.size() && std::isalpha(static_cast<unsigned char>(text[k])); };
    if (text[i + 1] == '-' && alpha(i + 2)) {
      size_t end = i + 2;
      while (end < text.size() && isWordChar(text[end])) ++end;
      while (text[end - 1] == '-') --end;
      out.push_back(text.substr(i, end - i));
      i = end - 1;
    } else if (alpha(i + 1) && (i + 2 == text.size() || !isWordChar(text[i + 2]))) {
      out.push_back(text.substr(i, 2));
      ++i;
    }
  }
  return out;
}

// The help texts ("" is `mlsys --help`) and the config paths of `mlsys solve --print-config`, the
// mappings (`sa`, `sa.moves`) included.
struct Cli {
  std::map<std::string, std::string> help;
  std::set<std::string> keys, sections;
};

Cli readCli() {
  Cli cli;
  const auto help = [](const Strings& args) {
    const test::RunResult r = test::runMlsys(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  cli.help[""] = help({"--help"});
  for (const std::string& c : kCommands) cli.help[c] = help({c, "--help"});
  std::istringstream in(help({"solve", "--print-config"}));
  Strings path;  // the keys of the enclosing mappings, one per 2 spaces of indentation
  for (std::string line; std::getline(in, line);) {
    const size_t indent = line.find_first_not_of(' '), colon = line.find(':');
    if (indent == std::string::npos || colon == std::string::npos) continue;
    path.resize(indent / 2);
    path.push_back(line.substr(indent, colon - indent));
    std::string key = path[0];
    for (size_t i = 1; i < path.size(); ++i) key += "." + path[i];
    cli.keys.insert(key);
    if (indent == 0) cli.sections.insert(key);
  }
  return cli;
}

const Cli& cli() {
  static const Cli c = readCli();
  return c;
}

// The dotted config keys in `text`: a section name (`search`, `sa`, ...) not preceded by a word
// character, '/' or '.', then '.' and a lower-case path (`sa.moves.<name>` gives `sa.moves`).
Strings keysIn(const std::string& text, const std::set<std::string>& sections) {
  Strings out;
  const auto lowerPathChar = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_' ||
           c == '-' || c == '.';
  };
  for (const std::string& s : sections) {
    for (size_t at = text.find(s + "."); at != std::string::npos; at = text.find(s + ".", at + 1)) {
      if (at > 0 && (isWordChar(text[at - 1]) || text[at - 1] == '/' || text[at - 1] == '.')) continue;
      size_t end = at + s.size() + 1;
      if (end >= text.size() || !std::islower(static_cast<unsigned char>(text[end]))) continue;
      while (end < text.size() && lowerPathChar(text[end])) ++end;
      while (text[end - 1] == '.' || text[end - 1] == '-') --end;
      out.push_back(text.substr(at, end - at));
    }
  }
  return out;
}

bool keyExists(const std::string& key, const std::set<std::string>& keys) {
  if (keys.count(key)) return true;
  // `lns.moves.<kind>` may name any move kind, as `sa.moves` lists them all.
  const size_t dot = key.rfind('.');
  return dot != std::string::npos && key.substr(0, dot).ends_with(".moves") && keys.count(key.substr(0, dot)) &&
         keys.count("sa.moves" + key.substr(dot));
}

// Collects what a document names that does not exist.
struct Checker {
  const Cli& cli;
  Strings problems;
  int flags = 0, keys_seen = 0;  // how many were checked

  // `command`: "*" for any help text, "" for `mlsys --help`, else the command's.
  void flag(const std::string& f, const std::string& command, int line) {
    bool found = false;
    ++flags;
    for (const auto& [name, text] : cli.help)
      if ((command == "*" || name == command) && mentions(text, f)) found = true;
    if (!found)
      problems.push_back("line " + std::to_string(line) + ": " + f + " is not in the --help of " +
                         (command == "*" ? std::string("any command") : "mlsys " + command));
  }
  void keys(const std::string& text, int line) {
    for (const std::string& k : keysIn(text, cli.sections))
      if (++keys_seen && !keyExists(k, cli.keys))
        problems.push_back("line " + std::to_string(line) + ": config key " + k + " is not in --print-config");
  }
  // One shell command: mlsys's flags are checked against its command's help, another program's not at all.
  void segment(const Strings& words, int line) {
    size_t i = 0;
    const auto assignment = [](const std::string& w) {
      const size_t eq = w.find('=');
      return eq != std::string::npos && eq > 0 && std::isupper(static_cast<unsigned char>(w[0])) &&
             w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == eq;
    };
    while (i < words.size() && assignment(words[i])) ++i;
    if (i == words.size()) return;
    const std::string& program = words[i];
    const std::string base = program.substr(program.rfind('/') + 1);
    std::string command = "*";
    if (base == "mlsys") {
      const bool named = i + 1 < words.size() && isCommand(words[i + 1]);
      command = named ? words[i + 1] : (i + 1 < words.size() && words[i + 1][0] == '-') ? "" : "solve";
      i += named ? 2 : 1;
    } else if (isCommand(program)) {
      command = program;
      ++i;
    } else if (isOtherProgram(base) || program.find('/') != std::string::npos) {
      return;
    }
    for (; i < words.size(); ++i)
      for (const std::string& f : flagsIn(words[i])) flag(f, command, line);
  }
  // A code span or a line of a code block, split into commands at `&&`, `||`, ` | `, `;` and parentheses.
  void code(const std::string& unit, int line) {
    keys(unit, line);
    std::istringstream in(unit);
    Strings words;
    const auto flush = [&] {
      segment(words, line);
      words.clear();
    };
    for (std::string w; in >> w;) {
      if (w == "&&" || w == "||" || w == "|" || w == ";") {
        flush();
        continue;
      }
      for (; !w.empty() && w.front() == '('; w.erase(0, 1)) flush();
      bool ends = false;
      for (; !w.empty() && (w.back() == ')' || w.back() == ';'); w.pop_back()) ends = true;
      if (!w.empty()) words.push_back(w);
      if (ends) flush();
    }
    flush();
  }
  // Text with inline code spans: the spans as code, the rest as prose (any command's flag).
  void text(const std::string& t, int line) {
    std::string prose;
    size_t from = 0;
    for (size_t open = t.find('`'); open != std::string::npos; open = t.find('`', from)) {
      const size_t close = t.find('`', open + 1);
      if (close == std::string::npos) break;
      prose += t.substr(from, open - from) + " ";
      code(t.substr(open + 1, close - open - 1), line);
      from = close + 1;
    }
    prose += t.substr(from);
    keys(prose, line);
    for (const std::string& f : flagsIn(prose)) flag(f, "*", line);
  }
};

// The command a heading names (`solve`), "" when it names none or several.
std::string headingCommand(const std::string& heading) {
  std::string found;
  for (const std::string& c : kCommands) {
    if (heading.find("`" + c + "`") == std::string::npos && heading.find("`mlsys " + c + "`") == std::string::npos)
      continue;
    if (!found.empty()) return "";
    found = c;
  }
  return found;
}

// A flag table's row under a heading that names a command: its first cell is that command's.
bool commandRow(Checker& check, const std::string& row, const std::string& command, int line) {
  if (command.empty() || row.rfind("| `-", 0) != 0) return false;
  const size_t cell_end = row.find(" | ", 2);
  const std::string cell = row.substr(2, cell_end == std::string::npos ? std::string::npos : cell_end - 2);
  for (const std::string& f : flagsIn(cell)) check.flag(f, command, line);
  check.keys(cell, line);
  if (cell_end != std::string::npos) check.text(row.substr(cell_end), line);
  return true;
}

// Everything a Markdown document names that --help or --print-config does not know (and how many
// flags and keys it named).
Checker unknownNames(const std::string& markdown, const Cli& cli) {
  Checker check{cli, {}};
  std::istringstream in(markdown);
  std::string paragraph, command, previous;
  int line_no = 0, paragraph_line = 0;
  size_t command_level = 0;
  bool fenced = false;
  const auto flush = [&] {
    if (!paragraph.empty()) check.text(paragraph, paragraph_line);
    paragraph.clear();
  };
  for (std::string line; std::getline(in, line); previous = line) {
    ++line_no;
    const bool indented_code =
        !fenced && line.rfind("    ", 0) == 0 && line.find_first_not_of(' ') != std::string::npos &&
        (previous.find_first_not_of(' ') == std::string::npos || previous.rfind("    ", 0) == 0) && paragraph.empty();
    if (line.rfind("```", 0) == 0) {
      flush();
      fenced = !fenced;
    } else if (fenced || indented_code) {
      const size_t comment = line.find(" #");
      check.code(line.substr(0, comment), line_no);
      if (comment != std::string::npos) check.text(line.substr(comment + 2), line_no);
    } else if (line.rfind('#', 0) == 0) {
      flush();
      const size_t level = line.find_first_not_of('#');
      const std::string named = headingCommand(line);
      if (!named.empty() || level <= command_level) command = named, command_level = named.empty() ? 0 : level;
      check.text(line.substr(level), line_no);
    } else if (line.rfind('|', 0) == 0) {
      flush();
      if (!commandRow(check, line, command, line_no)) check.text(line, line_no);
    } else if (line.find_first_not_of(' ') == std::string::npos) {
      flush();
    } else {
      if (paragraph.empty()) paragraph_line = line_no;
      paragraph += line + " ";
    }
  }
  flush();
  return check;
}

std::string joined(const Strings& lines) {
  std::string out;
  for (const std::string& l : lines) out += "  " + l + "\n";
  return out;
}

TEST(Readme, EveryFlagAndConfigKeyItNamesExists) {
  const std::string readme = test::readText(test::sourceDir() + "/README.md");
  const Checker check = unknownNames(readme, cli());
  EXPECT_TRUE(check.problems.empty()) << "README.md names what mlsys does not have:\n" << joined(check.problems);
  EXPECT_GT(check.flags, 50) << "the scan missed the README's flags";
  EXPECT_GT(check.keys_seen, 30) << "the scan missed the README's config keys";
}

TEST(Readme, EveryFlagAndConfigKeyOfTheCommandReferenceExists) {
  const std::string reference = test::readText(test::sourceDir() + "/engine/cli/REFERENCE.md");
  const Checker check = unknownNames(reference, cli());
  EXPECT_TRUE(check.problems.empty()) << "engine/cli/REFERENCE.md names what mlsys does not have:\n"
                                      << joined(check.problems);
  EXPECT_GT(check.flags, 100) << "the scan missed the reference's flags";
}

TEST(Readme, TheCheckFindsAnUnknownFlagOrKeyAndLeavesOtherProgramsAlone) {
  const std::string doc =
      "Run `mlsys solve P.json O.json --frobnicate` or `./build/release/mlsys evaluate P S --seconds 2`,\n"
      "with `--set sa.frobnicate=1` and -z, not `cmake --preset release` nor `python3 bench/tune.py --minutes 3`.\n"
      "\n"
      "### `bound`\n"
      "\n"
      "| `--walk` | evaluate's, not bound's |\n"
      "\n"
      "    bash .ci/install-deps && ./build/release/mlsys report P S -o r.html --trace t.csv  # see --frobnicate\n";
  const Strings problems = unknownNames(doc, cli()).problems;
  const std::string all = joined(problems);
  EXPECT_EQ(problems.size(), 6u) << all;
  for (const char* expected :
       {"line 1: --frobnicate is not in the --help of mlsys solve",
        "line 1: --seconds is not in the --help of mlsys evaluate", "line 1: config key sa.frobnicate",
        "line 1: -z is not in the --help of any command", "line 6: --walk is not in the --help of mlsys bound",
        "line 8: --frobnicate is not in the --help of any command"})
    EXPECT_NE(all.find(expected), std::string::npos) << expected << "\n" << all;
}

// GitHub's anchor of a heading: lower case, spaces as '-', other punctuation dropped; "-1", "-2"
// for repeats.
std::set<std::string> anchorsOf(const std::string& markdown) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  std::istringstream in(markdown);
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.rfind('#', 0) != 0) continue;
    std::string slug;
    for (char c : line.substr(line.find_first_not_of('#'))) {
      const auto u = static_cast<unsigned char>(c);
      if (std::isalnum(u) || c == '-' || c == '_' || u >= 0x80) slug += static_cast<char>(std::tolower(u));
      if (c == ' ') slug += '-';
    }
    slug.erase(0, slug.find_first_not_of('-'));
    const int n = seen[slug]++;
    anchors.insert(n == 0 ? slug : slug + "-" + std::to_string(n));
  }
  return anchors;
}

// The relative links of a document (outside code) that reach no file, or no heading of it.
Strings brokenLinks(const std::string& relative) {
  namespace fs = std::filesystem;
  const fs::path doc = fs::path(test::sourceDir()) / relative;
  const std::string text = test::readText(doc.string());
  Strings broken;
  std::istringstream in(text);
  bool fenced = false;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced) continue;
    for (size_t open = line.find('`'); open != std::string::npos; open = line.find('`')) {  // no code spans
      const size_t close = line.find('`', open + 1);
      line.erase(open, close == std::string::npos ? std::string::npos : close - open + 1);
    }
    for (size_t at = line.find("]("); at != std::string::npos; at = line.find("](", at + 2)) {
      const size_t end = line.find(')', at);
      if (end == std::string::npos) break;
      const std::string target = line.substr(at + 2, end - at - 2);
      if (target.rfind("http", 0) == 0 || target.rfind("mailto:", 0) == 0) continue;
      const size_t hash = target.find('#');
      const std::string file = target.substr(0, hash),
                        anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
      const fs::path path = file.empty() ? doc : (doc.parent_path() / file).lexically_normal();
      const std::string where = relative + ":" + std::to_string(line_no) + ": " + target;
      if (!fs::exists(path)) broken.push_back(where + " (no such file)");
      else if (!anchor.empty() && !anchorsOf(test::readText(path.string())).count(anchor))
        broken.push_back(where + " (no such heading)");
    }
  }
  return broken;
}

TEST(Readme, LinksReachFilesAndHeadingsThatExist) {
  for (const char* doc : {"README.md", "ARCHITECTURE.md", "engine/cli/REFERENCE.md", "bench/README.md"}) {
    const Strings broken = brokenLinks(doc);
    EXPECT_TRUE(broken.empty()) << joined(broken);
  }
}

TEST(Readme, TheUsersGuideIsShortAndOpensWithItsContents) {
  std::istringstream in(test::readText(test::sourceDir() + "/README.md"));
  int guide_lines = 0, contents_at = 0;
  std::string all;
  for (std::string line; std::getline(in, line) && line != "---";) {
    ++guide_lines;
    if (line == "## Contents" && contents_at == 0) contents_at = guide_lines;
    all += line + "\n";
  }
  EXPECT_LT(guide_lines, 250) << "the user's guide (README.md up to its '---' line)";
  EXPECT_GT(contents_at, 0) << "README.md has no '## Contents'";
  EXPECT_LT(contents_at, 20) << "the contents table comes first";
  // The quick start's command lines: `.ci/run` runs the test one, and the minimal install is shown.
  std::istringstream run(test::readText(test::sourceDir() + "/.ci/run"));
  std::string ci_line;
  for (std::string line; std::getline(run, line);)
    if (line.rfind("bash .ci/install-deps", 0) == 0) ci_line = line;
  ASSERT_FALSE(ci_line.empty()) << ".ci/run runs no `bash .ci/install-deps ...` line";
  EXPECT_NE(all.find("\n    " + ci_line + "\n"), std::string::npos) << ci_line;
  EXPECT_NE(all.find("\n    bash .ci/install-deps --minimal && cmake --preset release"), std::string::npos);
}

}  // namespace
}  // namespace mlsys
