# Sourced by the benchmarks that run the connect4 recipe's farm and trainer
# outside `zerofarm loop` (tools/gpu_check.sh --net-sizes):
# the recipe's search and trainer options (data/recipes/connect4.recipe), the
# net size aside, in one place. Keep in step with that recipe.
# shellcheck shell=bash disable=SC2034  # the arrays are read by the sourcing script
recipe_search=(--game connect4 --seed 1 --simulations 64 --games-per-worker 32 --value-discount 0.98
               --temperature-plies 20 --final-temperature 0.3 --random-opening-plies 8)
recipe_train=(--seed 1 --window 150000 --lr 0.02 --value-discount 0.98)
