// Runs simulations each in a child process of its own: SystemC allows one elaboration per
// process, and separate processes let independent runs use every core.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

namespace t3 {

using IsolatedJob = std::function<nlohmann::json()>;
using Progress = std::function<void(std::size_t done, std::size_t total)>;
// Called in the parent as each job's result comes in (job index, its result).
using Finished = std::function<void(std::size_t job, const nlohmann::json& result)>;

// Runs every job in a forked child, at most `jobs` at once, and returns their results in job
// order (deterministic whatever order they finish in). With `costs` (one estimate per job) the
// costliest start first. A job that throws, or a child that dies, yields {"error": "<what
// happened>"}. `finished` sees each result as it arrives. Call it before any SystemC object
// exists in this process.
std::vector<nlohmann::json> run_isolated(const std::vector<IsolatedJob>& work, int jobs,
                                         const Progress& progress = {},
                                         const std::vector<double>& costs = {},
                                         const Finished& finished = {});

// The cores this machine has (at least 1): the default for --jobs.
int default_jobs();

}  // namespace t3
