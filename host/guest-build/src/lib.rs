//! Guest build helper.
