// The calibration-profile database: profiles (model/calibration.h) kept in SQLite, as
// `llmcap calibrate --db FILE` writes them (docs/model.md, "Calibration").
#pragma once

#include <cstdint>
#include <filesystem>

#include "model/calibration.h"

namespace llmcap::store {

/// Appends `profile` to the SQLite database at `path` (created if missing) in one transaction:
/// tables schema_version (model::kCalibrationSchemaVersion), machines (one row per distinct CPU
/// model, flags, cores and caches), profiles (time, command, the fit as JSON text,
/// model::fit_to_json), bandwidth_samples and kernel_samples. Returns the new profile's id.
/// Throws base::InputError naming the file for an SQLite error, a file that is not such a
/// database, or another schema version.
int64_t write_profile(const std::filesystem::path& path, const model::CalibrationProfile& profile);

/// Reads profile `profile_id` (0 or less: the latest) from a database written by write_profile.
/// Throws base::InputError naming the file when it is missing or not such a database, has
/// another schema version, holds no profile (or none with that id), or its fit is malformed.
model::CalibrationProfile read_profile(const std::filesystem::path& path, int64_t profile_id = 0);

}  // namespace llmcap::store
