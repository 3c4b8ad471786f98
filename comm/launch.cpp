#include "comm/launch.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "hal/error.h"

namespace hal::comm {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

int parse_count(const char* name, const char* text, int min_value) {
  int value = 0;
  const char* end = text + std::char_traits<char>::length(text);
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || value < min_value)
    throw_invalid_argument("launch", name, fmt::format("an integer >= {}", min_value), fmt::format("'{}'", text));
  return value;
}

}  // namespace

std::string Launch::describe() const {
  const char* kind_name = kind == Kind::mpi ? "mpi" : kind == Kind::env ? "env" : "single";
  return fmt::format("{} rank {} of {}", kind_name, rank, size);
}

Launch detect_launch() {
  Launch l;
  // MPI first: under mpirun the HAL_* variables, if inherited, are ignored.
  const std::pair<const char*, const char*> mpi_vars[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"PMIX_RANK", "PMIX_SIZE"}};
  for (auto [rank_var, size_var] : mpi_vars) {
    if (env(rank_var) && env(size_var)) {
      l.kind = Launch::Kind::mpi;
      l.size = parse_count(size_var, env(size_var), 1);
      l.rank = parse_count(rank_var, env(rank_var), 0);
      return l;
    }
  }
  const char* rank = env("HAL_RANK");
  const char* size = env("HAL_WORLD_SIZE");
  if (!rank && !size) return l;
  if (!rank || !size)
    throw_invalid_argument("launch", rank ? "HAL_WORLD_SIZE" : "HAL_RANK",
                           "HAL_RANK and HAL_WORLD_SIZE set together", "only one of them");
  l.kind = Launch::Kind::env;
  l.size = parse_count("HAL_WORLD_SIZE", size, 1);
  l.rank = parse_count("HAL_RANK", rank, 0);
  if (l.rank >= l.size)
    throw_invalid_argument("launch", "HAL_RANK", fmt::format("a rank below HAL_WORLD_SIZE={}", l.size),
                           std::to_string(l.rank));
  if (const char* path = env("HAL_RENDEZVOUS")) l.rendezvous = path;
  if (l.size > 1 && l.rendezvous.empty())
    throw_invalid_argument("launch", "HAL_RENDEZVOUS", "a file path every rank can see (HAL_WORLD_SIZE > 1)",
                           "unset");
  return l;
}

int local_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"})
    if (const char* v = env(var)) return parse_count(var, v, 0);
  return 0;
}

std::string expand_local_rank(std::string name) {
  const std::string key = "{local_rank}";
  for (std::size_t p; (p = name.find(key)) != std::string::npos;) name.replace(p, key.size(), std::to_string(local_rank()));
  return name;
}

}  // namespace hal::comm
