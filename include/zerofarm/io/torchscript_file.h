#pragma once
// A model file in TorchScript (a torch.jit.save archive, "MODEL.pt"), read
// and checked without LibTorch (docs/models.md): the supervisor reads it
// before any child starts, the evaluator hands the bytes to LibTorch.
//
// A TorchScript archive is code: LibTorch runs whatever operators it holds.
// Load only models you trust, as you would run only scripts you trust.
#include <cstdint>
#include <string>

#include "zerofarm/eval/weights.h"

namespace zerofarm::io {

// The metadata file every model archive holds among its extra files
// (torch.jit.save(m, path, _extra_files={"zerofarm.json": ...})): one JSON
// object with "game" (a string) and "planes", "height", "width", "actions",
// "version" (non-negative integers); other keys are ignored.
inline constexpr const char* kModelMetadataFile = "zerofarm.json";
// The largest model file read (the whole file is read into memory).
inline constexpr uint64_t kMaxModelFileBytes = uint64_t{2} << 30;

// True for a path naming a TorchScript model ("*.pt"); ".pt2" for an
// AOTInductor package (read where eval::AotiBuilt(): LibTorch 2.x).
bool IsTorchScriptPath(const std::string& path);
bool IsPt2Path(const std::string& path);

// Reads a TorchScript model file: its bytes into script, its metadata into
// config (scripted = true) and version. Safe on a hostile file: the size is
// bounded before it is read (kMaxModelFileBytes), and the zip's central
// directory is checked before anything else (every entry stored, not
// compressed, and lying inside the file, so nothing inflates). Throws
// ConfigError with one line naming the file and what is wrong:
//   "m.pt: not a zip archive (a TorchScript model is a torch.jit.save archive)"
//   "m.pt: entry m/data.pkl is compressed (method 8); torch.jit.save stores entries uncompressed"
//   "m.pt: no extra file zerofarm.json (the model's metadata, docs/models.md)"
//   "m.pt: zerofarm.json: \"planes\" must be a non-negative integer"
// A "*.pt2" AOTInductor package is read the same way (package = true): its
// model under data/aotinductor/, its metadata an entry zerofarm.json at the
// archive's top (docs/models.md).
eval::WeightSet ReadTorchScriptFile(const std::string& path);

// The metadata of zerofarm.json's text `json` into `w` (config and version);
// ConfigError "SOURCE: zerofarm.json: ..." when a key is missing or of the
// wrong type, or the text is not one flat JSON object.
void ParseModelMetadata(const std::string& json, const std::string& source, eval::WeightSet* w);

}  // namespace zerofarm::io
