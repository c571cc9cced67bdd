//! receipt-required
