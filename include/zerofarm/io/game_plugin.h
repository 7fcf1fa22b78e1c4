#pragma once
// Loading a game plugin (game/plugin.h): a game built as a shared library
// against an installed zerofarm, given with --game-plugin FILE.so.
#include <string>

namespace zerofarm::io {

// Loads the game plugin at `path` and registers its game (game::RegisterGame),
// so game::MakeGame(name) builds it; returns the game's name. Loading is
// running the file's code, so the file is opened with OpenOwnCodeFile's rules
// (safe_files.h) and the checked file is the one loaded. Loading the same
// file again returns its name and does nothing else.
// Throws ConfigError with one line naming `path` when the file is missing,
// refused, not a shared object or fails to load (dlopen's reason); when it
// has no zerofarm_game_plugin entry point or another plugin ABI
// (game::kGamePluginAbi); or when its game's name is bad or taken (a
// built-in game's). Call before any thread reads the game registry.
std::string LoadGamePlugin(const std::string& path);

// True when `arg` names a plugin file rather than a game: it ends in ".so"
// or contains '/'.
bool IsGamePluginPath(const std::string& arg);

}  // namespace zerofarm::io
