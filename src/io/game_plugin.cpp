// Loading a game plugin (include/zerofarm/io/game_plugin.h).
#include "zerofarm/io/game_plugin.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/core_version.h"
#include "zerofarm/game/plugin.h"
#include "zerofarm/io/safe_files.h"

namespace zerofarm::io {
namespace {

struct LoadedPlugin {
  dev_t dev;
  ino_t ino;
  std::string name;
};

// The plugins this process loaded, by file identity.
std::vector<LoadedPlugin>& Loaded() {
  static std::vector<LoadedPlugin> loaded;
  return loaded;
}

// Closes a descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

// Throws unless the file starts with the ELF magic (dlopen's own message for
// a text file is long and cryptic).
void RequireElf(int fd, const std::string& path) {
  char magic[4] = {};
  if (::pread(fd, magic, sizeof magic, 0) != static_cast<ssize_t>(sizeof magic) || magic[0] != 0x7f ||
      magic[1] != 'E' || magic[2] != 'L' || magic[3] != 'F')
    throw ConfigError(path + " is not a shared object (no ELF header): not a game plugin");
}

// A registry name: 1 to 64 characters of a-z, 0-9, '-' and '_'.
bool GoodName(const char* name) {
  if (name == nullptr) return false;
  const std::string n = name;
  if (n.empty() || n.size() > 64) return false;
  for (const char ch : n)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_')) return false;
  return true;
}

// The plugin's description, checked: entry point, ABI, name, a game that says its name.
const ZfGamePlugin& CheckedPlugin(void* handle, const std::string& path) {
  using Entry = const ZfGamePlugin* (*)();
  const auto entry = reinterpret_cast<Entry>(::dlsym(handle, game::kGamePluginEntry));
  if (entry == nullptr)
    throw ConfigError(path + " has no " + game::kGamePluginEntry +
                      "() entry point: not a zerofarm game plugin (see ZF_GAME_PLUGIN in game/plugin.h)");
  const ZfGamePlugin* p = entry();
  if (p == nullptr) throw ConfigError(path + ": " + game::kGamePluginEntry + "() returned no plugin");
  if (p->abi_version != game::kGamePluginAbi)
    throw ConfigError(path + " was built for game plugin ABI " + std::to_string(p->abi_version) +
                      "; this zerofarm (" + ZF_VERSION_STRING + ") loads ABI " +
                      std::to_string(game::kGamePluginAbi) + ": rebuild the plugin against it");
  if (!GoodName(p->name) || p->make == nullptr)
    throw ConfigError(path +
                      ": its game name is not 1-64 characters of a-z, 0-9, '-', '_', or it has no factory");
  return *p;
}

}  // namespace

bool IsGamePluginPath(const std::string& arg) {
  return arg.find('/') != std::string::npos || (arg.size() > 3 && arg.compare(arg.size() - 3, 3, ".so") == 0);
}

std::string LoadGamePlugin(const std::string& path) {
  const FdCloser file{OpenOwnCodeFile(path)};
  struct stat st;
  if (::fstat(file.fd, &st) != 0) throw ConfigError(ErrnoMessage(path, errno));
  for (const LoadedPlugin& l : Loaded())
    if (l.dev == st.st_dev && l.ino == st.st_ino) return l.name;
  RequireElf(file.fd, path);
  // dlopen the descriptor that was checked, not the name (which could be
  // swapped for another file in between). A plugin is never unloaded.
  const std::string fd_path = "/proc/self/fd/" + std::to_string(file.fd);
  void* handle = ::dlopen(fd_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    std::string why = error ? error : "dlopen failed";  // it names fd_path: say path instead
    if (why.rfind(fd_path + ": ", 0) == 0) why.erase(0, fd_path.size() + 2);
    throw ConfigError(path + ": cannot load it: " + PrintableText(why, 300));
  }
  const ZfGamePlugin& plugin = CheckedPlugin(handle, path);
  const std::string name = plugin.name;
  for (const std::string& known : game::GameNames())
    if (known == name)
      throw ConfigError(path + ": its game '" + name + "' has the name of a game zerofarm already has");
  std::unique_ptr<game::Game> probe;
  try {
    probe.reset(plugin.make());
  } catch (const std::exception& e) {
    throw ConfigError(path + ": making its game failed: " + PrintableText(e.what()));
  }
  if (!probe || probe->Name() != name)
    throw ConfigError(path + ": its game's Name() is not '" + name + "', the name it registers");
  auto make = plugin.make;
  game::RegisterGame(name, [make] { return std::unique_ptr<game::Game>(make()); });
  Loaded().push_back({st.st_dev, st.st_ino, name});
  return name;
}

}  // namespace zerofarm::io
