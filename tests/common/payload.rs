//! DUMP payloads of module values, crafted the way Redis writes them, for
//! RESTORE attacks: every value type's tests craft their bad payloads here.

use redis::Connection;

/// A module value's DUMP payload, written the way Redis writes one: the
/// type and module id of a real value's DUMP, then each item with its
/// opcode, the end opcode, the RDB version and the CRC64.
pub struct Payload {
    bytes: Vec<u8>,
    /// The RDB version Redis put after the value.
    rdb_version: [u8; 2],
}

/// `rdbSaveLen`: 6, 14, 32 or 64 bits.
fn rdb_len(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=0x3f => out.push(n as u8),
        0x40..=0x3fff => out.extend([0x40 | (n >> 8) as u8, n as u8]),
        0x4000..=0xffff_ffff => {
            out.push(0x80);
            out.extend((n as u32).to_be_bytes());
        }
        _ => {
            out.push(0x81);
            out.extend(n.to_be_bytes());
        }
    }
}

/// Redis's CRC64 (Jones polynomial, reflected, as `crc64.c`).
fn crc64(bytes: &[u8]) -> u64 {
    let mut crc = 0u64;
    for &byte in bytes {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x95ac_9329_ac4b_c9b5
            } else {
                crc >> 1
            };
        }
    }
    crc
}

impl Payload {
    /// Starts from the type and module id of `real`, a DUMP of the type.
    pub fn like(real: &[u8]) -> Payload {
        assert_eq!(real[0], 7, "RDB_TYPE_MODULE_2");
        assert_eq!(real[1], 0x81, "a 64-bit module id");
        let tail = real.len() - 10;
        Payload {
            bytes: real[..10].to_vec(),
            rdb_version: [real[tail], real[tail + 1]],
        }
    }

    pub fn int(mut self, value: i64) -> Payload {
        rdb_len(&mut self.bytes, 2); // RDB_MODULE_OPCODE_UINT
        rdb_len(&mut self.bytes, value as u64);
        self
    }

    pub fn text(mut self, value: &str) -> Payload {
        rdb_len(&mut self.bytes, 5); // RDB_MODULE_OPCODE_STRING
        rdb_len(&mut self.bytes, value.len() as u64);
        self.bytes.extend(value.as_bytes());
        self
    }

    pub fn finish(mut self) -> Vec<u8> {
        rdb_len(&mut self.bytes, 0); // RDB_MODULE_OPCODE_EOF
        self.bytes.extend(self.rdb_version);
        let crc = crc64(&self.bytes);
        self.bytes.extend(crc.to_le_bytes());
        self.bytes
    }
}

pub fn dump(con: &mut Connection, key: &str) -> Vec<u8> {
    redis::cmd("DUMP").arg(key).query(con).unwrap()
}

pub fn restore(con: &mut Connection, key: &str, payload: &[u8]) -> redis::RedisResult<()> {
    redis::cmd("RESTORE")
        .arg(key)
        .arg(0)
        .arg(payload)
        .arg("REPLACE")
        .query(con)
}

/// `payload` (a DUMP of a module value) as if written with encoding
/// version `version`: the module id's low 10 bits, and the CRC again.
pub fn with_encoding_version(payload: &[u8], version: u64) -> Vec<u8> {
    assert!(version < 1024);
    let mut body = payload[..payload.len() - 8].to_vec();
    let id = u64::from_be_bytes(body[2..10].try_into().unwrap());
    body[2..10].copy_from_slice(&((id & !1023) | version).to_be_bytes());
    let crc = crc64(&body);
    body.extend(crc.to_le_bytes());
    body
}

/// The integers of a module value's DUMP payload (RDB_MODULE_OPCODE_UINT
/// items after the type and the 8-byte module id, up to the EOF opcode).
pub fn items(payload: &[u8]) -> Vec<i64> {
    fn len(bytes: &[u8], at: &mut usize) -> u64 {
        let first = bytes[*at];
        *at += 1;
        match first >> 6 {
            0 => u64::from(first & 0x3f),
            1 => {
                *at += 1;
                (u64::from(first & 0x3f) << 8) | u64::from(bytes[*at - 1])
            }
            _ if first == 0x80 => {
                *at += 4;
                u64::from(u32::from_be_bytes(bytes[*at - 4..*at].try_into().unwrap()))
            }
            _ if first == 0x81 => {
                *at += 8;
                u64::from_be_bytes(bytes[*at - 8..*at].try_into().unwrap())
            }
            _ => panic!("length encoding {first:#x}"),
        }
    }
    let mut at = 10;
    let mut out = Vec::new();
    loop {
        match len(payload, &mut at) {
            0 => return out,
            2 => out.push(len(payload, &mut at) as i64),
            op => panic!("opcode {op}"),
        }
    }
}
