//! The one deterministic archive writer: a skill's files as a PAX tar, gzip-compressed, the
//! same bytes for the same files wherever and whenever it runs (ToolHive's layer format): flat
//! relative paths, sorted, no folder entries, mode 0644, uid/gid 0, no user or group names,
//! mtime `epoch` (`SOURCE_DATE_EPOCH`, default 0); gzip at best compression with the same
//! mtime, no file name and OS byte 255. `push` writes its layer with it (and the discovery
//! index its archives, later).

use std::io::Write as _;

use anyhow::{Result, bail};

/// `files` (relative `/`-separated path, bytes) as a `.tar.gz`, sorted by path.
pub fn tar_gz(files: &[(String, Vec<u8>)], epoch: u64) -> Result<Vec<u8>> {
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut tar = Vec::new();
    for pair in sorted.windows(2) {
        if pair[0].0 == pair[1].0 {
            bail!("{} is given twice", pair[0].0);
        }
    }
    for (path, bytes) in sorted {
        skills_engine::walk::check_read_path(path).map_err(|e| anyhow::anyhow!(e))?;
        write_entry(&mut tar, path, bytes, epoch);
    }
    // The end: two zero blocks.
    tar.extend_from_slice(&[0u8; 1024]);
    let mut gz = flate2::GzBuilder::new()
        .mtime(u32::try_from(epoch).unwrap_or(u32::MAX))
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::best());
    gz.write_all(&tar)?;
    Ok(gz.finish()?)
}

/// One file: a PAX extended header carrying `path` when it does not fit the ustar name
/// field (or is not ASCII), then the ustar header and the content padded to 512 bytes.
fn write_entry(out: &mut Vec<u8>, path: &str, bytes: &[u8], epoch: u64) {
    let fits = path.len() <= 100 && path.is_ascii();
    if !fits {
        let record = pax_record("path", path);
        let name = format!("PaxHeaders/{}", tail(path, 80));
        out.extend_from_slice(&header(&name, record.len() as u64, epoch, b'x'));
        out.extend_from_slice(&record);
        pad(out, record.len());
    }
    let name = if fits {
        path.to_owned()
    } else {
        tail(path, 100)
    };
    out.extend_from_slice(&header(&name, bytes.len() as u64, epoch, b'0'));
    out.extend_from_slice(bytes);
    pad(out, bytes.len());
}

/// `"<len> key=value\n"`, where `<len>` counts the whole record, itself included.
fn pax_record(key: &str, value: &str) -> Vec<u8> {
    let body = format!(" {key}={value}\n");
    let mut len = body.len() + 1;
    while format!("{len}").len() + body.len() != len {
        len += 1;
    }
    format!("{len}{body}").into_bytes()
}

/// The last at most `max` bytes of `path`, ASCII only (a header's fallback name).
fn tail(path: &str, max: usize) -> String {
    let ascii: String = path
        .chars()
        .map(|c| if c.is_ascii() && c != '\0' { c } else { '_' })
        .collect();
    ascii[ascii.len().saturating_sub(max)..].to_owned()
}

fn pad(out: &mut Vec<u8>, len: usize) {
    let rest = len % 512;
    if rest != 0 {
        out.extend(std::iter::repeat_n(0u8, 512 - rest));
    }
}

/// A ustar header (`ustar\0` magic, version `00`).
fn header(name: &str, size: u64, mtime: u64, kind: u8) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], size);
    octal(&mut h[136..148], mtime);
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    // The checksum is computed with its own field as spaces.
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    let text = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(text.as_bytes());
    h
}

/// `value` in octal, zero-padded, NUL-terminated, filling `field`.
fn octal(field: &mut [u8], value: u64) {
    let width = field.len() - 1;
    let text = format!("{value:0width$o}");
    let text = &text[text.len().saturating_sub(width)..];
    field[..width].copy_from_slice(text.as_bytes());
    field[width] = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_files_give_the_same_bytes_and_read_back() {
        let long = format!("{}SKILL-notes.md", "deep/".repeat(30));
        let files = vec![
            ("scripts/b.py".to_string(), b"print(1)\n".to_vec()),
            ("SKILL.md".to_string(), b"---\nname: x\n---\n".to_vec()),
            (long.clone(), b"long".to_vec()),
            ("ünï.md".to_string(), b"u".to_vec()),
        ];
        let a = tar_gz(&files, 0).unwrap();
        let mut reversed = files.clone();
        reversed.reverse();
        assert_eq!(a, tar_gz(&reversed, 0).unwrap());
        assert_ne!(a, tar_gz(&files, 1).unwrap());
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&a[..]));
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = String::from_utf8(entry.path_bytes().into_owned()).unwrap();
            assert_eq!(entry.header().mode().unwrap(), 0o644);
            assert_eq!(entry.header().mtime().unwrap(), 0);
            let mut body = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut body).unwrap();
            seen.push((path, body));
        }
        let mut want = files;
        want.sort();
        assert_eq!(seen, want);
        assert!(tar_gz(&[("../x".into(), vec![])], 0).is_err());
    }
}
