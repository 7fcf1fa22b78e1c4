// Fuzz target: recipe files (`zerofarm loop --recipe FILE`): ReadRecipe, then
// what the loop does with one: its arguments (WithRecipeArgs), each stage's
// description, which stage is in force, and the comparison with the recipe
// a run was begun with (RecipeDifference: the text read again is no change).
#include <cstdint>
#include <cstdlib>

#include "fuzz_input.h"
#include "zerofarm/learn/recipe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace learn = zerofarm::learn;
  if (size > (1u << 16)) return -1;  // ReadRecipe refuses more than 64 KiB
  const std::string& path = zerofarm::fuzz::InputFile(data, size, ".recipe");
  zerofarm::fuzz::ExpectOnlyErrors([&] {
    const learn::Recipe r = learn::ReadRecipe(path);
    // Read twice, a recipe is the same recipe.
    if (!learn::RecipeDifference(r, learn::ParseRecipe(r.text, "again")).empty()) std::abort();
    learn::WithRecipeArgs(r, {"zerofarm-loop", "--run-args", "--workers 1", "--blocks=2"});
    for (const auto& s : r.stages) s.Describe();
    learn::StagesStarted(r.stages, learn::RunProgress{1e6, 1'000'000'000});
    learn::StagesStarted(r.stages, learn::RunProgress{});
  });
  return 0;
}
