// ReadTorchScriptFile: a TorchScript archive checked as a zip and its
// metadata read, without LibTorch (docs/models.md).
#include "zerofarm/io/torchscript_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>

#include "zerofarm/core/error.h"
#include "zerofarm/io/weights_file.h"

namespace zerofarm::io {

namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The whole file, its size bounded before it is read; a FIFO or device is never read.
std::string ReadBoundedFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw ConfigError(path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw ConfigError(path + ": not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > kMaxModelFileBytes) {
    ::close(fd);
    throw ConfigError(path + ": " + std::to_string(size) + " bytes, more than the " +
                      std::to_string(kMaxModelFileBytes) + " a model file may hold");
  }
  std::string bytes(size, '\0');
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, &bytes[got], size - got);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      ::close(fd);
      throw ConfigError(path + ": short read (the file changed while being read?)");
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return bytes;
}

uint64_t Le(const std::string& b, uint64_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<uint64_t>(i)]);
  return v;
}

// Deflate's own bound is 1032:1; nothing a model holds comes close.
constexpr uint64_t kMaxInflateRatio = 1032;

struct ZipEntry {
  std::string name;
  uint64_t offset = 0;  // of the entry's data in the file
  uint64_t size = 0;
};

// Where the central directory lies (offset, size, entries), from the end
// record (and its zip64 record where the end record points there).
struct CentralDirectory {
  uint64_t offset = 0, size = 0, entries = 0;
};

CentralDirectory FindCentralDirectory(const std::string& b, const std::string& path) {
  const std::string not_zip = path + ": not a zip archive (a TorchScript model is a torch.jit.save archive)";
  if (b.size() < 22) throw ConfigError(not_zip);
  uint64_t eocd = b.size() - 22;
  const uint64_t lowest = b.size() > 22 + 65535 ? b.size() - 22 - 65535 : 0;
  while (Le(b, eocd, 4) != 0x06054b50) {
    if (eocd == lowest) throw ConfigError(not_zip);
    --eocd;
  }
  CentralDirectory cd{Le(b, eocd + 16, 4), Le(b, eocd + 12, 4), Le(b, eocd + 10, 2)};
  if (cd.offset == 0xffffffff || cd.entries == 0xffff || cd.size == 0xffffffff) {  // zip64
    if (eocd < 20 || Le(b, eocd - 20, 4) != 0x07064b50) throw ConfigError(not_zip + " (no zip64 locator)");
    const uint64_t rec = Le(b, eocd - 20 + 8, 8);
    if (b.size() < 56 || rec > b.size() - 56 || Le(b, rec, 4) != 0x06064b50)  // 56: the record's size
      throw ConfigError(not_zip + " (bad zip64 record)");
    cd = {Le(b, rec + 48, 8), Le(b, rec + 40, 8), Le(b, rec + 32, 8)};
  }
  if (cd.offset > b.size() || cd.size > b.size() - cd.offset || cd.entries > cd.size / 46)
    throw ConfigError(path + ": its zip central directory lies outside the file (truncated?)");
  return cd;
}

// The zip64 extra field's values for the header fields that are 0xffffffff, in order.
void ApplyZip64Extra(const std::string& b, uint64_t extra, uint64_t extra_len, uint64_t* uncompressed,
                     uint64_t* compressed, uint64_t* local) {
  for (uint64_t at = extra; at + 4 <= extra + extra_len;) {
    const uint64_t id = Le(b, at, 2), len = Le(b, at + 2, 2);
    if (at + 4 + len > extra + extra_len) return;
    if (id == 1) {
      uint64_t p = at + 4;
      for (uint64_t* field : {uncompressed, compressed, local})
        if (*field == 0xffffffff && p + 8 <= at + 4 + len) {
          *field = Le(b, p, 8);
          p += 8;
        }
    }
    at += 4 + len;
  }
}

// Every entry of the central directory, each checked to lie inside the file,
// before the central directory, and to inflate to at most kMaxInflateRatio
// times its bytes (+ 64 KiB), all together to at most kMaxModelFileBytes
// (summed in *inflated).
std::vector<ZipEntry> ListEntries(const std::string& b, const std::string& path, uint64_t* inflated) {
  const CentralDirectory cd = FindCentralDirectory(b, path);
  std::vector<ZipEntry> entries;
  uint64_t at = cd.offset;
  const uint64_t end = cd.offset + cd.size;
  for (uint64_t i = 0; i < cd.entries; ++i) {
    if (at + 46 > end || Le(b, at, 4) != 0x02014b50)
      throw ConfigError(path + ": a corrupt zip central directory (entry " + std::to_string(i) + ")");
    const uint64_t method = Le(b, at + 10, 2), name_len = Le(b, at + 28, 2), extra_len = Le(b, at + 30, 2),
                   comment_len = Le(b, at + 32, 2);
    uint64_t compressed = Le(b, at + 20, 4), uncompressed = Le(b, at + 24, 4), local = Le(b, at + 42, 4);
    if (at + 46 + name_len + extra_len + comment_len > end)
      throw ConfigError(path + ": a corrupt zip central directory (entry " + std::to_string(i) + ")");
    ZipEntry e;
    e.name = b.substr(at + 46, name_len);
    const std::string shown = PrintableText(e.name);  // never echoed raw
    ApplyZip64Extra(b, at + 46 + name_len, extra_len, &uncompressed, &compressed, &local);
    if (method != 0 && method != 8)
      throw ConfigError(path + ": entry " + shown + " has compression method " + std::to_string(method) +
                        "; torch.jit.save stores (0) or deflates (8)");
    if ((method == 0 && compressed != uncompressed) || local > cd.offset || cd.offset - local < 30 ||
        Le(b, local, 4) != 0x04034b50)
      throw ConfigError(path + ": entry " + shown + " is corrupt (sizes or offset)");
    e.offset = local + 30 + Le(b, local + 26, 2) + Le(b, local + 28, 2);
    if (e.offset > cd.offset || compressed > cd.offset - e.offset)
      throw ConfigError(path + ": entry " + shown + " declares " + std::to_string(compressed) +
                        " bytes, more than the file holds");
    // A zip bomb: what inflating would allocate, bounded before LibTorch sees it.
    // Each message names the limit that tripped.
    *inflated += uncompressed;
    if (uncompressed > kMaxInflateRatio * compressed + 65536)
      throw ConfigError(path + ": entry " + shown + " inflates to " + std::to_string(uncompressed) +
                        " bytes from " + std::to_string(compressed) + ", more than " +
                        std::to_string(kMaxInflateRatio) + " times its bytes + 64 KiB (a zip bomb?)");
    if (*inflated > kMaxModelFileBytes)
      throw ConfigError(path + ": its entries inflate to " + std::to_string(*inflated) +
                        " bytes up to entry " + shown + ", more than the " +
                        std::to_string(kMaxModelFileBytes) + " a model may hold in all (a zip bomb?)");
    e.size = method == 0 ? uncompressed : 0;  // the size of its stored bytes (0: deflated, not read here)
    entries.push_back(std::move(e));
    at += 46 + name_len + extra_len + comment_len;
  }
  return entries;
}

// One flat JSON object's keys and values: strings as their text, numbers,
// true, false and null as written; a nested object or array as "{" or "[".
// Enough for zerofarm.json, and strict: anything else is an error.
class FlatJson {
 public:
  struct Value {
    bool is_string = false;
    std::string text;
  };
  FlatJson(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  std::map<std::string, Value> Parse() {
    std::map<std::string, Value> out;
    Expect('{');
    if (Peek() == '}') return ++i_, Trailing(out);
    while (true) {
      const std::string key = String();
      Expect(':');
      out[key] = ParseValue(0);
      const char c = Next();
      if (c == '}') return Trailing(out);
      if (c != ',') Fail("expected , or }");
    }
  }

 private:
  const std::string& s_;
  const std::string& where_;
  size_t i_ = 0;

  [[noreturn]] void Fail(const std::string& what) const {
    throw ConfigError(where_ + ": not one JSON object (" + what + " at byte " + std::to_string(i_) + ")");
  }
  char Peek() {
    while (i_ < s_.size() && std::strchr(" \t\r\n", s_[i_]) && s_[i_] != '\0') ++i_;
    if (i_ >= s_.size()) Fail("unexpected end");
    return s_[i_];
  }
  char Next() {
    const char c = Peek();
    ++i_;
    return c;
  }
  void Expect(char c) {
    if (Next() != c) Fail(std::string("expected ") + c);
  }
  std::map<std::string, Value> Trailing(std::map<std::string, Value>& out) {
    while (i_ < s_.size() && std::strchr(" \t\r\n", s_[i_]) && s_[i_] != '\0') ++i_;
    if (i_ != s_.size()) Fail("text after the object");
    return std::move(out);
  }
  std::string String() {
    Expect('"');
    std::string out;
    while (true) {
      if (i_ >= s_.size()) Fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) Fail("unterminated string");
      const char e = s_[i_++];
      const char* from = "\"\\/bfnrt";
      const char* to = "\"\\/\b\f\n\r\t";
      const char* at = std::strchr(from, e);
      if (!at || e == '\0') Fail("an unknown escape");
      out += to[at - from];
    }
  }
  Value ParseValue(int depth) {
    if (depth > 32) Fail("nesting too deep");
    Value v;
    const char c = Peek();
    if (c == '"') return v.is_string = true, v.text = String(), v;
    if (c == '{' || c == '[') {
      ++i_;
      v.text = std::string(1, c);
      const char close = c == '{' ? '}' : ']';
      if (Peek() == close) return ++i_, v;
      while (true) {
        if (c == '{') String(), Expect(':');
        ParseValue(depth + 1);
        const char n = Next();
        if (n == close) return v;
        if (n != ',') Fail("expected , or " + std::string(1, close));
      }
    }
    while (i_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[i_])) || std::strchr("+-.", s_[i_])) && s_[i_] != '\0')
      v.text += s_[i_++];
    if (v.text.empty()) Fail("expected a value");
    return v;
  }
};

}  // namespace

void ParseModelMetadata(const std::string& json, const std::string& source, eval::WeightSet* w) {
  const std::string where = source + ": " + kModelMetadataFile;
  const std::map<std::string, FlatJson::Value> keys = FlatJson(json, where).Parse();
  const auto get = [&](const char* key) -> const FlatJson::Value& {
    const auto it = keys.find(key);
    if (it == keys.end()) throw ConfigError(where + " has no \"" + key + "\"");
    return it->second;
  };
  const auto integer = [&](const char* key, uint64_t most) {
    const FlatJson::Value& v = get(key);
    const std::string must = where + ": \"" + key + "\" must be an integer in 0.." + std::to_string(most);
    if (v.is_string || v.text.empty() || v.text.size() > 12) throw ConfigError(must);
    for (char c : v.text)
      if (!std::isdigit(static_cast<unsigned char>(c))) throw ConfigError(must);
    const uint64_t n = std::stoull(v.text);
    if (n > most) throw ConfigError(must);
    return n;
  };
  const FlatJson::Value& game = get("game");
  if (!game.is_string || game.text.empty())
    throw ConfigError(where + ": \"game\" must be a non-empty string");
  eval::NetConfig& c = w->config;
  c = eval::NetConfig{};
  CheckGameName(where, game.text);
  c.game = game.text;
  c.scripted = true;
  c.blocks = c.filters = c.value_hidden = 0;
  c.planes = static_cast<int>(integer("planes", kMaxWeightsPlanes));
  c.height = static_cast<int>(integer("height", kMaxWeightsBoardSide));
  c.width = static_cast<int>(integer("width", kMaxWeightsBoardSide));
  c.actions = static_cast<int>(integer("actions", kMaxWeightsActions));
  w->version = static_cast<uint32_t>(integer("version", std::numeric_limits<uint32_t>::max()));
}

bool IsTorchScriptPath(const std::string& path) { return EndsWith(path, ".pt"); }
bool IsPt2Path(const std::string& path) { return EndsWith(path, ".pt2"); }

eval::WeightSet ReadTorchScriptFile(const std::string& path) {
  eval::WeightSet w;
  w.source = path;
  w.script = ReadBoundedFile(path);
  uint64_t inflated = 0;
  const std::vector<ZipEntry> entries = ListEntries(w.script, path, &inflated);
  // An AOTInductor package (.pt2) keeps its model under data/aotinductor/ and
  // zerofarm.json at its top, where LibTorch's loader does not look.
  w.package = IsPt2Path(path);
  const ZipEntry* metadata = nullptr;
  bool has_data = false;
  for (const ZipEntry& e : entries) {
    has_data |= w.package ? e.name.rfind("data/aotinductor/", 0) == 0 : EndsWith(e.name, "/data.pkl");
    if (w.package ? e.name == kModelMetadataFile
                  : EndsWith(e.name, std::string("/extra/") + kModelMetadataFile))
      metadata = &e;
  }
  if (metadata && metadata->size == 0) {  // torch.jit.save stores extra files, uncompressed
    throw ConfigError(path + ": its " + kModelMetadataFile + " is compressed or empty; save it with " +
                      (w.package ? "tools/zf_weights_torch.py" : "torch.jit.save"));
  }
  if (!has_data && w.package)
    throw ConfigError(path + ": a zip archive, but not an AOTInductor package (no data/aotinductor/)");
  if (!has_data) throw ConfigError(path + ": a zip archive, but not a TorchScript model (no data.pkl)");
  if (!metadata && w.package)
    throw ConfigError(
        path + ": no " + kModelMetadataFile +
        " at its top (the model's metadata, docs/models.md; tools/zf_weights_torch.py to-aoti adds it)");
  if (!metadata)
    throw ConfigError(path + ": no extra file " + kModelMetadataFile +
                      " (the model's metadata, docs/models.md; a torch.save state_dict of the built-in net "
                      "converts with tools/zf_weights_torch.py from-state-dict)");
  if (metadata->size > 65536) throw ConfigError(path + ": " + kModelMetadataFile + " is larger than 64 KiB");
  ParseModelMetadata(w.script.substr(metadata->offset, metadata->size), path, &w);
  return w;
}

}  // namespace zerofarm::io
