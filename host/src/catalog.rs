//! Skill roots opened as cap-std directories, walked and read (in parallel) to build engine indexes; the current index snapshot, swapped atomically.
