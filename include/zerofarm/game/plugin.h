#pragma once
// A game built as a shared library, outside zerofarm's tree, and loaded with
// `--game-plugin FILE.so` (docs/adding-a-game.md; the loader: io/game_plugin.h).
//
// The library defines one C function, the entry point,
//   extern "C" const ZfGamePlugin* zerofarm_game_plugin();
// with ZF_GAME_PLUGIN(name, GameClass) below. It is compiled against the
// installed headers only (CMake: find_package(zerofarm), target
// zerofarm::game) and links no zerofarm library: what it calls of zerofarm
// (Game's default text methods, board_util.h, zerofarm::Error) resolves when
// it is loaded, to the zerofarm binary that loads it, which exports those
// symbols (tools/CMakeLists.txt).
#include <cstdint>

#include "zerofarm/core_version.h"
#include "zerofarm/game/game.h"

// The version of the plugin interface: game.h's classes, board_util.h and
// ZfGamePlugin. A zerofarm binary loads only plugins built with its own value.
// Raise it whenever any of those change. A test builds a plugin of another
// version by defining it (-DZF_GAME_PLUGIN_ABI=N).
#ifndef ZF_GAME_PLUGIN_ABI
#define ZF_GAME_PLUGIN_ABI 1
#endif

extern "C" {
// What the entry point returns: a static object of the plugin.
struct ZfGamePlugin {
  // ZF_GAME_PLUGIN_ABI when the plugin was built. The first field in every
  // version, so a loader can refuse a plugin of another version.
  uint32_t abi_version;
  const char* zerofarm_version;     // ZF_VERSION_STRING it was built against
  const char* name;                 // the registry name: Name() of every game `make` returns
  zerofarm::game::Game* (*make)();  // a new game; the caller owns and deletes it
};
}

namespace zerofarm::game {
inline constexpr uint32_t kGamePluginAbi = ZF_GAME_PLUGIN_ABI;
inline constexpr const char* kGamePluginEntry = "zerofarm_game_plugin";  // the entry point's name
}  // namespace zerofarm::game

// Defines the entry point for the game class GAME (default-constructible)
// registered as NAME (a string literal: lower case, digits, '-').
#define ZF_GAME_PLUGIN(NAME, GAME)                                                               \
  extern "C" __attribute__((visibility("default"))) const ZfGamePlugin* zerofarm_game_plugin() { \
    static const ZfGamePlugin plugin = {ZF_GAME_PLUGIN_ABI, ZF_VERSION_STRING, NAME,             \
                                        []() -> ::zerofarm::game::Game* { return new GAME(); }}; \
    return &plugin;                                                                              \
  }
