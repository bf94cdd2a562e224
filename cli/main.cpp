// `troupe <command> [options]`: dispatches to the command table in cli/commands.hpp.
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options/errors.hpp>

#include "cli/commands.hpp"

namespace {

constexpr int kUsageError = 2;

void print_help() {
  std::cout << "usage: troupe <command> [options]\n\ncommands:\n";
  for (const auto& c : troupe::cli::kCommands) std::printf("  %-10s %s\n", c.name, c.summary);
  std::cout << "\n`troupe <command> --help` describes a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    print_help();
    return argc < 2 ? kUsageError : 0;
  }
  std::string name = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& c : troupe::cli::kCommands) {
    if (name != c.name) continue;
    try {
      return c.run(args);
    } catch (const boost::program_options::error& e) {
      std::cerr << "troupe " << name << ": " << e.what() << "\n";
      return kUsageError;
    } catch (const std::exception& e) {
      std::cerr << "troupe " << name << ": error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "troupe: unknown command '" << name << "' (see troupe --help)\n";
  return kUsageError;
}
