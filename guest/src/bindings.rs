//! The component boundary: generated WIT bindings and conversions to `crate::model`.
