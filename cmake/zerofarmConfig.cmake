# zerofarm's CMake package (installed by `cmake --install`): what a game plugin
# builds against (docs/adding-a-game.md, include/zerofarm/game/plugin.h).
#   find_package(zerofarm REQUIRED)
#   zerofarm_add_game_plugin(mygame mygame.cpp)   # builds mygame.so
# zerofarm::game: the public headers and C++17; no library to link (the
# zerofarm binary that loads the plugin provides the symbols it calls).
include("${CMAKE_CURRENT_LIST_DIR}/zerofarmTargets.cmake")

# zerofarm_add_game_plugin(NAME SOURCES...): the shared object NAME.so.
function(zerofarm_add_game_plugin name)
  add_library(${name} MODULE ${ARGN})
  target_link_libraries(${name} PRIVATE zerofarm::game)
  set_target_properties(${name} PROPERTIES PREFIX "" CXX_EXTENSIONS OFF)
endfunction()
