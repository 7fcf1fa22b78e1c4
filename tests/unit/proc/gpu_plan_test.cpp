// Which GPU each evaluator gets (proc/gpu_plan.h): pure functions, no GPU needed.
#include "zerofarm/proc/gpu_plan.h"

#include <catch2/catch.hpp>

#include "zerofarm/core/error.h"
#include "zerofarm/proc/farm_config.h"

using namespace zerofarm;
using namespace zerofarm::proc;
using List = std::vector<std::string>;

TEST_CASE("visible GPUs come from CUDA_VISIBLE_DEVICES or else Slurm or else the driver",
          "[proc][gpu_plan]") {
  GpuEnvironment env;
  SECTION("nothing known") { CHECK_FALSE(VisibleGpus(env).has_value()); }
  SECTION("the driver's devices") {
    env.devices_found = 3;
    CHECK(VisibleGpus(env) == List{"0", "1", "2"});
  }
  SECTION("CUDA_VISIBLE_DEVICES as given, blanks dropped") {
    env.cuda_visible_devices = "5, 7,GPU-1a2b";
    CHECK(VisibleGpus(env) == List{"5", "7", "GPU-1a2b"});
    env.devices_found = 2;  // taken as given: CUDA in the evaluator judges it
    CHECK(VisibleGpus(env) == List{"5", "7", "GPU-1a2b"});
  }
  SECTION("an empty CUDA_VISIBLE_DEVICES hides every GPU") {
    env.cuda_visible_devices = "";
    env.devices_found = 4;
    CHECK(VisibleGpus(env) == List{});
  }
  SECTION("Slurm's list when CUDA_VISIBLE_DEVICES is unset, bounded by SLURM_GPUS_ON_NODE") {
    env.slurm_gpus = "2,3,6";
    CHECK(VisibleGpus(env) == List{"2", "3", "6"});
    env.slurm_gpus_on_node = 2;
    CHECK(VisibleGpus(env) == List{"2", "3"});
    env.cuda_visible_devices = "0,1,2,3";
    CHECK(VisibleGpus(env) == List{"0", "1"});
  }
  SECTION("SLURM_GPUS_ON_NODE alone") {
    env.slurm_gpus_on_node = 2;
    CHECK(VisibleGpus(env) == List{"0", "1"});
  }
}

TEST_CASE("each evaluator gets its own visible GPU", "[proc][gpu_plan]") {
  CHECK(EvaluatorDevices(1, List{"0"}, false, false) == List{"0"});
  CHECK(EvaluatorDevices(2, List{"4", "6", "7"}, false, false) == List{"4", "6"});
  CHECK(EvaluatorDevices(3, List{"4", "6", "7"}, false, false) == List{"4", "6", "7"});
  // Nothing known (no driver, no variable): CUDA decides in each evaluator.
  CHECK(EvaluatorDevices(2, std::nullopt, false, false) == List{"0", "1"});
}

TEST_CASE("more evaluators than GPUs need --share-gpus which puts several on one GPU", "[proc][gpu_plan]") {
  CHECK_THROWS_AS(EvaluatorDevices(2, List{"3"}, false, false), ConfigError);
  CHECK_THROWS_WITH(EvaluatorDevices(2, List{"3"}, false, false),
                    Catch::Contains("--gpus 2 but 1 GPU(s) visible (3)") && Catch::Contains("--share-gpus"));
  CHECK(EvaluatorDevices(2, List{"3"}, true, false) == List{"3", "3"});
  CHECK(EvaluatorDevices(5, List{"0", "1"}, true, false) == List{"0", "1", "0", "1", "0"});
}

TEST_CASE("no visible GPU is a ConfigError unless the GPUs are simulated", "[proc][gpu_plan]") {
  CHECK_THROWS_AS(EvaluatorDevices(1, List{}, true, false), ConfigError);
  CHECK(EvaluatorDevices(2, List{}, false, true) == List{"0", "1"});
  // Simulating still honours the devices that are there.
  CHECK(EvaluatorDevices(2, List{"5", "7"}, false, true) == List{"5", "7"});
  CHECK_THROWS_AS(EvaluatorDevices(2, List{"5"}, false, true), ConfigError);
  CHECK_THROWS_AS(EvaluatorDevices(0, List{"0"}, false, false), Error);
}

TEST_CASE("simulated GPUs (--simulate-gpus) need GPU evaluators and run them on the CPU",
          "[proc][gpu_plan]") {
  FarmConfig c;
  c.out = "runs/test";
  c.gpus = 2;
  CHECK(c.OnGpu());
  c.simulate_gpus = true;
  CHECK_FALSE(c.OnGpu());
  CHECK(c.Evaluators() == 2);
  CHECK_NOTHROW(c.Validate());
  c.precision = "fp16";
  CHECK_THROWS_AS(c.Validate(), ConfigError);
  c.precision = "auto";
  c.gpus = 0;
  CHECK_THROWS_WITH(c.Validate(), Catch::Contains("--simulate-gpus needs --gpus >= 1"));
  // The placement settings travel to the exec'd evaluators in the config text.
  c.gpus = 2;
  c.share_gpus = true;
  const FarmConfig back = FarmConfig::FromText(c.ToText());
  CHECK(back.simulate_gpus);
  CHECK(back.share_gpus);
}
