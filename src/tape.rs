//! A plain in-memory RDB payload: the items a module value writes, read
//! back in order. Unit tests and fuzz targets save and load values with it,
//! without a server.

use crate::redis::{Reader, Writer};

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tape {
    /// Integers (`Ok`) and byte strings (`Err`), in order.
    pub items: Vec<Result<i64, Vec<u8>>>,
    at: usize,
}

impl Writer for Tape {
    fn integer(&mut self, value: i64) {
        self.items.push(Ok(value));
    }
    fn bytes(&mut self, value: &[u8]) {
        self.items.push(Err(value.to_vec()));
    }
}

impl Reader for Tape {
    fn integer(&mut self) -> Option<i64> {
        self.at += 1;
        self.items.get(self.at - 1)?.clone().ok()
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        self.at += 1;
        self.items.get(self.at - 1)?.clone().err()
    }
}
