// The Python module `mlsys` (its compiled part, mlsys._mlsys; engine/python/mlsys/__init__.py is
// the package): the same library as the command line, through pybind11.
//   Problem, Schedule      from and to the contest's JSON dicts (through the C++ readers, so a
//                          dict is checked exactly as a file is), files and JSON text
//   evaluate(p, s)         the full evaluator: total, per-subgraph latencies, every violation
//   bound(p)               the lower bound (cost/bound/bound.h)
//   solve(p, ...)          the search (engine/search/solve.h) in memory. The GIL is released
//                          while it runs; the callback and the log take it back for each call.
//                          Ctrl-C stops the search and returns the best so far (stop reason
//                          "signal"): the caller's thread polls for Python signals every 50 ms.
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "cost/bound/bound.h"
#include "cost/model/problem.h"
#include "cost/model/rule.h"
#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"
#include "engine/io/config.h"
#include "engine/io/files.h"
#include "engine/search/solve.h"

namespace py = pybind11;

namespace mlsys {
namespace {

using ProblemPtr = std::shared_ptr<Problem>;

// A Python callable that C++ may copy on any thread: copies share one reference (an atomic count,
// no GIL needed), and the last one drops the Python reference under the GIL.
std::shared_ptr<py::function> shareCallable(const py::function& f) {
  return std::shared_ptr<py::function>(new py::function(f), [](py::function* g) {
    py::gil_scoped_acquire gil;
    delete g;
  });
}

// A schedule with the problem it belongs to (its ops and tensors are indices into it).
struct PySchedule {
  ProblemPtr problem;
  Schedule schedule;
};

ModelOptions modelFrom(const std::optional<std::map<std::string, std::string>>& model) {
  ModelOptions m;
  if (model)
    for (const auto& [k, v] : *model) m.set(k, v);
  return m;
}

// Per-subgraph latencies to write: the evaluator's when the schedule is valid, else as read.
std::vector<double> latenciesOf(const PySchedule& s) {
  const Evaluation ev = evaluateSchedule(*s.problem, s.schedule, {});
  if (ev.valid) {
    std::vector<double> out;
    for (const auto& r : ev.subgraphs) out.push_back(r.cost.latency);
    return out;
  }
  std::vector<double> out = s.schedule.reported;
  out.resize(s.schedule.subgraphs.size(), 0.0);
  return out;
}

py::object jsonLoads(const std::string& text) { return py::module_::import("json").attr("loads")(text); }
// Where `o` holds a float that JSON cannot write (NaN, inf): its path, such as base_costs[3]; "" if none.
std::string nonFiniteAt(const py::handle& o, const std::string& path, int depth = 0) {
  if (depth > 64) return "";  // the reader refuses nesting this deep with its own message
  if (py::isinstance<py::float_>(o)) return std::isfinite(o.cast<double>()) ? "" : (path.empty() ? "the value" : path);
  if (py::isinstance<py::dict>(o)) {
    for (const auto& [k, v] : o.cast<py::dict>()) {
      const std::string key = py::str(k).cast<std::string>();
      std::string at = nonFiniteAt(v, path.empty() ? key : path + "." + key, depth + 1);
      if (!at.empty()) return at;
    }
  } else if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    size_t i = 0;
    for (const auto& v : o) {
      std::string at = nonFiniteAt(v, path + "[" + std::to_string(i++) + "]", depth + 1);
      if (!at.empty()) return at;
    }
  }
  return "";
}

// A dict as JSON text for the C++ readers; a NaN or infinity is refused naming its field.
std::string jsonDumps(const py::object& obj, const std::string& what) {
  const std::string at = nonFiniteAt(obj, "");
  if (!at.empty()) throw InputError(what + ": " + at + " is not a finite number (NaN and infinity are not JSON)");
  return py::module_::import("json").attr("dumps")(obj, py::arg("allow_nan") = false).cast<std::string>();
}

// Runs `work` on a thread of its own while this thread (holding the GIL; only the main thread
// sees Python's signals) looks for signals every 50 ms without holding it. On a signal,
// on_signal() runs; when it returns true the signal's exception (KeyboardInterrupt) is raised once
// the thread has ended, else the wait goes on. Returns what `work` threw, if anything.
std::exception_ptr runWatchingSignals(const std::function<void()>& work, const std::function<bool()>& on_signal) {
  std::exception_ptr error;
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  std::thread t([&] {
    try {
      work();
    } catch (...) {
      error = std::current_exception();
    }
    done.set_value();
  });
  for (;;) {
    bool ready = false;
    {
      py::gil_scoped_release nogil;
      ready = finished.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready;
    }
    if (ready) break;
    if (PyErr_CheckSignals() != 0 && on_signal()) {
      {
        py::gil_scoped_release nogil;
        t.join();
      }
      throw py::error_already_set();
    }
  }
  py::gil_scoped_release nogil;
  t.join();
  return error;
}

struct PyImprovement {
  PySchedule schedule;
  double latency = 0, seconds = 0, bound = 0;
  std::string found_by;
};

struct PySolveResult {
  std::optional<PySchedule> schedule;
  double latency = -1, bound = 0, gap = 1, seconds = 0, best_found_s = 0;
  bool optimal = false;
  std::string stop_reason, model;
  long evaluations = 0;
  int threads = 0;
  std::vector<double> subgraph_latencies;
  std::optional<py::dict> bound_violation;  // engine/search/bound_guard.h: None when none
};

struct SolveArgs {
  std::optional<double> seconds;
  std::optional<int> threads;
  std::optional<uint64_t> seed;
  std::optional<std::string> config;
  std::vector<std::string> set;
  std::optional<std::map<std::string, std::string>> model;
  std::optional<py::function> callback, log;
  std::optional<PySchedule> init;
  std::optional<double> target, stall_seconds;
  std::optional<int64_t> max_evals;
  bool exact = false;
};

// The settings as the CLI resolves them: the config file (a path or a shipped name such as
// "contest"), then `set`, then the arguments.
SolveOptions optionsFrom(const SolveArgs& a) {
  SolveOptions so;
  so.config = a.config ? findConfig(*a.config) : "";
  so.set = a.set;
  SearchConfig cfg = loadConfig(so.config, so.set);
  if (a.seconds) cfg.seconds = *a.seconds;
  if (a.threads) cfg.threads = *a.threads;
  if (a.seed) cfg.seed = *a.seed;
  if (a.model)  // over the config's model, as the CLI's --model
    for (const auto& [k, v] : *a.model) cfg.model.set(k, v);
  useConfig(so, cfg);
  so.quiet = !a.log;
  if (a.init) so.init_schedule = a.init->schedule;
  so.target = a.target.value_or(-1);
  so.stall_s = a.stall_seconds.value_or(-1);
  so.max_evals = a.max_evals.value_or(-1);
  so.exact = a.exact;
  // The self-check's test seam, as the CLI's (tests/python/test_mlsys.py): a wrong argument
  // planted in the bound, every part floor multiplied. Never set outside the tests.
  if (const char* plant = std::getenv("MLSYS_TEST_PLANT_PART_SCALE")) so.bound_args.test_part_scale = std::atof(plant);
  return so;
}

PySolveResult pySolve(const ProblemPtr& p, const SolveArgs& a) {
  if (a.init && a.init->problem != p)
    throw InputError("solve: init= is a schedule of another Problem object (parse it with this problem)");
  SolveOptions so = optionsFrom(a);
  StopSource stop;
  so.stop = &stop;
  std::exception_ptr callback_error;  // a Python exception from the callback or the log, raised at the end
  if (a.callback) {
    const std::shared_ptr<py::function> cb = shareCallable(*a.callback);
    so.on_improvement = [cb, p, &callback_error, &stop](const Improvement& imp) {
      py::gil_scoped_acquire gil;
      try {
        PyImprovement pi{PySchedule{p, imp.schedule}, imp.latency, imp.seconds, imp.bound, imp.found_by};
        const py::object r = (*cb)(pi);
        return r.is_none() || r.cast<bool>();  // None (a callback that only looks) goes on
      } catch (...) {
        callback_error = std::current_exception();
        stop.request();
        return false;
      }
    };
  }
  if (a.log) {
    const std::shared_ptr<py::function> log = shareCallable(*a.log);
    so.log = [log](const std::string& line) {
      py::gil_scoped_acquire gil;
      try {
        (*log)(line);
      } catch (py::error_already_set& e) {
        e.discard_as_unraisable("mlsys log sink");
      }
    };
  }
  SolveOutcome out;
  // Ctrl-C stops the search; the best so far is returned instead of a KeyboardInterrupt.
  const std::exception_ptr solve_error = runWatchingSignals([&] { out = solve(*p, so); },
                                                            [&] {
                                                              PyErr_Clear();
                                                              stop.request(SIGINT);
                                                              return false;
                                                            });
  if (callback_error) std::rethrow_exception(callback_error);
  if (solve_error) std::rethrow_exception(solve_error);
  PySolveResult r;
  if (out.best >= 0) r.schedule = PySchedule{p, out.schedule};
  r.latency = out.best;
  r.bound = out.lower_bound;
  r.gap = out.gap;
  r.seconds = out.seconds;
  r.best_found_s = out.best_found_s;
  r.optimal = out.optimal;
  r.stop_reason = stopReasonName(out.stop_reason);
  r.model = out.model;
  r.evaluations = out.search.evaluations;
  r.threads = out.threads;
  r.subgraph_latencies = out.subgraph_latencies;
  if (out.bound_violation) {
    py::dict v;
    v["bound"] = out.bound_violation->bound;
    v["latency"] = out.bound_violation->latency;
    v["argument"] = out.bound_violation->argument;
    v["file"] = out.bound_violation->file;
    r.bound_violation = std::move(v);
  }
  return r;
}

py::dict evaluationDict(const Evaluation& ev) {
  py::dict d;
  d["valid"] = ev.valid;
  d["total"] = ev.valid ? py::object(py::float_(ev.total)) : py::none();
  py::list lat, viol, warn;
  if (ev.valid)
    for (const auto& r : ev.subgraphs) lat.append(r.cost.latency);
  for (const Violation& v : ev.violations) {
    py::dict x;
    x["rule"] = ruleName(v.rule);
    x["subgraph"] = v.subgraph >= 0 ? py::object(py::int_(v.subgraph)) : py::none();
    x["reason"] = v.reason;
    viol.append(x);
  }
  for (const std::string& w : ev.warnings) warn.append(w);
  d["subgraph_latencies"] = lat;
  d["violations"] = viol;
  d["warnings"] = warn;
  d["model"] = ev.model.describe();
  return d;
}

void bindData(py::module_& m) {
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);

  py::class_<Problem, std::shared_ptr<Problem>>(m, "Problem", "A problem (the contest's input format).")
      .def_static(
          "from_json",
          [](const std::string& text, const std::string& name) {
            return std::make_shared<Problem>(parseProblemText(text, name));
          },
          py::arg("text"), py::arg("name") = "problem")
      .def_static(
          "from_dict",
          [](const py::object& d, const std::string& name) {
            return std::make_shared<Problem>(parseProblemText(jsonDumps(d, "problem '" + name + "'"), name));
          },
          py::arg("d"), py::arg("name") = "problem")
      .def_static(
          "from_file", [](const std::string& path) { return std::make_shared<Problem>(parseProblemFile(path)); },
          py::arg("path"))
      .def("to_json", [](const Problem& p) { return problemToJson(p); })
      .def("to_dict", [](const Problem& p) { return jsonLoads(problemToJson(p)); })
      .def_property_readonly("name", [](const Problem& p) { return p.name; })
      .def_property_readonly("num_ops", [](const Problem& p) { return p.numOps(); })
      .def_property_readonly(
          "op_names", [](const Problem& p) { return p.op_names; },
          "The model node of each op (the `op_names` key, from an ONNX import); empty when the file has none.")
      .def_property_readonly("num_tensors", [](const Problem& p) { return p.numTensors(); })
      .def("__repr__", [](const Problem& p) {
        return "<mlsys.Problem '" + p.name + "': " + std::to_string(p.numOps()) + " ops, " +
               std::to_string(p.numTensors()) + " tensors>";
      });

  py::class_<PySchedule>(m, "Schedule", "A schedule of a problem (the contest's output format).")
      .def_static(
          "from_json",
          [](const ProblemPtr& p, const std::string& text) {
            return PySchedule{p, parseScheduleText(text, *p)};
          },
          py::arg("problem"), py::arg("text"))
      .def_static(
          "from_dict",
          [](const ProblemPtr& p, const py::object& d) {
            return PySchedule{p, parseScheduleText(jsonDumps(d, "schedule"), *p)};
          },
          py::arg("problem"), py::arg("d"))
      .def_static(
          "from_file",
          [](const ProblemPtr& p, const std::string& path) {
            return PySchedule{p, parseScheduleFile(path, *p)};
          },
          py::arg("problem"), py::arg("path"))
      .def("to_json", [](const PySchedule& s) { return scheduleToJson(s.schedule, *s.problem, latenciesOf(s)); })
      .def("to_dict",
           [](const PySchedule& s) { return jsonLoads(scheduleToJson(s.schedule, *s.problem, latenciesOf(s))); })
      .def_property_readonly("problem", [](const PySchedule& s) { return s.problem; })
      .def_property_readonly("num_subgraphs", [](const PySchedule& s) { return s.schedule.subgraphs.size(); })
      .def("__repr__", [](const PySchedule& s) {
        return "<mlsys.Schedule of '" + s.problem->name + "': " + std::to_string(s.schedule.subgraphs.size()) +
               " subgraphs>";
      });
}

void bindSolve(py::module_& m) {
  py::class_<PyImprovement>(m, "Improvement", "A new best, as the solve callback sees it.")
      .def_readonly("schedule", &PyImprovement::schedule)
      .def_readonly("latency", &PyImprovement::latency)
      .def_readonly("seconds", &PyImprovement::seconds)
      .def_readonly("found_by", &PyImprovement::found_by)
      .def_readonly("bound", &PyImprovement::bound)
      .def("__repr__", [](const PyImprovement& i) {
        return "<mlsys.Improvement " + std::to_string(i.latency) + " at " + std::to_string(i.seconds) + " s by " +
               i.found_by + ">";
      });

  py::class_<PySolveResult>(m, "SolveResult", "What solve() found.")
      .def_readonly("schedule", &PySolveResult::schedule)
      .def_readonly("latency", &PySolveResult::latency)
      .def_readonly("bound", &PySolveResult::bound)
      .def_readonly("gap", &PySolveResult::gap)
      .def_readonly("optimal", &PySolveResult::optimal)
      .def_readonly("stop_reason", &PySolveResult::stop_reason)
      .def_readonly("seconds", &PySolveResult::seconds)
      .def_readonly("best_found_s", &PySolveResult::best_found_s)
      .def_readonly("evaluations", &PySolveResult::evaluations)
      .def_readonly("threads", &PySolveResult::threads)
      .def_readonly("model", &PySolveResult::model)
      .def_readonly("subgraph_latencies", &PySolveResult::subgraph_latencies)
      .def_readonly("bound_violation", &PySolveResult::bound_violation,
                    "None, or a dict (bound, latency, argument, file) when a valid schedule was found below the "
                    "bound: an internal error; the bound was dropped and nothing was claimed optimal")
      .def("__repr__", [](const PySolveResult& r) {
        return "<mlsys.SolveResult latency " + std::to_string(r.latency) + ", bound " + std::to_string(r.bound) +
               ", stop " + r.stop_reason + ">";
      });

  m.def(
      "_evaluate",
      [](const PySchedule& s, const std::optional<std::map<std::string, std::string>>& model) {
        return evaluationDict(evaluateSchedule(*s.problem, s.schedule, modelFrom(model)));
      },
      py::arg("schedule"), py::arg("model") = py::none());
  m.def(
      "_bound",
      [](const ProblemPtr& p, const std::optional<std::map<std::string, std::string>>& model, double seconds) {
        // As `mlsys bound -s SECONDS`: past the budget the components left get their quick floors.
        // The bound runs on its own thread; this one waits without the GIL and looks for Python
        // signals every 50 ms: Ctrl-C stops the bound and raises KeyboardInterrupt.
        const ModelOptions mo = modelFrom(model);
        std::atomic<bool> interrupted{false};
        const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        BoundOptions bo;
        bo.give_up = [&] { return interrupted.load() || std::chrono::steady_clock::now() > until; };
        double value = 0;
        // Ctrl-C stops the bound and raises KeyboardInterrupt.
        const std::exception_ptr error = runWatchingSignals([&] { value = lowerBound(*p, mo, bo).value(); },
                                                            [&] {
                                                              interrupted = true;
                                                              return true;
                                                            });
        if (error) std::rethrow_exception(error);
        return value;
      },
      py::arg("problem"), py::arg("model") = py::none(), py::arg("seconds") = 10.0);
  m.def(
      "_solve",
      [](const ProblemPtr& p, std::optional<double> seconds, std::optional<int> threads, std::optional<uint64_t> seed,
         std::optional<std::string> config, std::vector<std::string> set,
         std::optional<std::map<std::string, std::string>> model, std::optional<py::function> callback,
         std::optional<py::function> log, std::optional<PySchedule> init, std::optional<double> target,
         std::optional<double> stall_seconds, std::optional<int64_t> max_evals, bool exact) {
        SolveArgs a{seconds, threads, seed,          std::move(config), std::move(set), std::move(model), callback, log,
                    init,    target,  stall_seconds, max_evals,         exact};
        return pySolve(p, a);
      },
      py::arg("problem"), py::arg("seconds") = py::none(), py::arg("threads") = py::none(),
      py::arg("seed") = py::none(), py::arg("config") = py::none(), py::arg("set") = std::vector<std::string>{},
      py::arg("model") = py::none(), py::arg("callback") = py::none(), py::arg("log") = py::none(),
      py::arg("init") = py::none(), py::arg("target") = py::none(), py::arg("stall_seconds") = py::none(),
      py::arg("max_evals") = py::none(), py::arg("exact") = false);
  m.attr("__version__") = MLSYS_VERSION;
}

}  // namespace
}  // namespace mlsys

PYBIND11_MODULE(_mlsys, m) {
  m.doc() = "mlsys: schedule search for the MLSys 2026 graph-scheduling problem (compiled core)";
  mlsys::bindData(m);
  mlsys::bindSolve(m);
}
