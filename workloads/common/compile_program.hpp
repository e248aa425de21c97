// compile_program.hpp — the driver of the compiler-like workloads (compiler,
// scopes): a generated program's globals, then its functions one at a time,
// through a front end that digests what it built into the checksum.
//
//   Generator(seed):   std::string globals();  void function(std::string& out);
//   FrontEnd(Checksum&): void globals(std::string_view);  void function(std::string_view);
//                        void totals();
#pragma once
#include <cstdint>
#include <string>

#include "workload.hpp"

namespace strata::workload {

template <class FrontEnd, class Generator>
std::uint64_t compile_program(const Options& options, std::uint64_t functions_per_scale) {
  Checksum sum;
  Generator generator(options.seed);
  FrontEnd front_end(sum);
  front_end.globals(generator.globals());
  std::string source;
  for (std::uint64_t i = 0, n = options.scale * functions_per_scale; i < n; ++i) {
    generator.function(source);
    front_end.function(source);
  }
  front_end.totals();
  return sum.value();
}

}  // namespace strata::workload
