#include "experiments/isolated.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "models/system/stall_error.h"

namespace t3 {

namespace {

// The child writes its result to a file rather than a pipe, so a large document never blocks it
// while the parent waits for another child.
std::string result_path(std::size_t job) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/t3sim-" + std::to_string(getpid()) + "-" +
         std::to_string(job) + ".json";
}

[[noreturn]] void child(const IsolatedJob& job, const std::string& path, pid_t parent) {
  // A simulation dies with the process that started it: a killed sweep leaves no orphans running
  // on. If the parent died before the request took effect, this process has been re-parented.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
  nlohmann::json result;
  int code = 0;
  try {
    result = job();
  } catch (const StallError& error) {
    // Marked, so the parent can throw it again as what it is (the command line exits 2 on it).
    result = {{"error", error.what()}, {"stall", true}};
    code = 1;
  } catch (const std::exception& error) {
    result = {{"error", error.what()}};
    code = 1;
  }
  std::ofstream(path) << result.dump();
  std::fflush(nullptr);
  _exit(code);
}

nlohmann::json collect(const std::string& path, int status) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::remove(path.c_str());
  if (WIFSIGNALED(status)) {
    return {
        {"error", "the simulation process died with signal " + std::to_string(WTERMSIG(status))}};
  }
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception&) {
    return {{"error", "the simulation process ended (exit " + std::to_string(WEXITSTATUS(status)) +
                          ") without a result"}};
  }
}

}  // namespace

std::vector<nlohmann::json> run_isolated(const std::vector<IsolatedJob>& work, int jobs,
                                         const Progress& progress, const std::vector<double>& costs,
                                         const Finished& finished) {
  std::vector<nlohmann::json> results(work.size());
  // Longest first, so no long job starts last while the other cores sit idle.
  std::vector<std::size_t> order(work.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (costs.size() == work.size()) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  }
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0, done = 0;
  std::fflush(nullptr);  // a child must not repeat what the parent buffered
  const pid_t parent = getpid();
  while (done < work.size()) {
    while (next < work.size() && static_cast<int>(running.size()) < std::max(1, jobs)) {
      const std::size_t job = order[next];
      const std::string path = result_path(job);  // named by the parent's pid, before the fork
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("cannot start a simulation process (fork failed)");
      if (pid == 0) child(work[job], path, parent);
      running[pid] = job;
      ++next;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    const auto found = running.find(pid);
    if (found == running.end()) continue;
    results[found->second] = collect(result_path(found->second), status);
    if (finished) finished(found->second, results[found->second]);
    running.erase(found);
    ++done;
    if (progress) progress(done, work.size());
  }
  return results;
}

int default_jobs() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace t3
