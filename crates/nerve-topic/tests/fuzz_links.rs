//! Fuzzing what a topic process reads from its peers: link messages (random bytes, and real
//! messages mutated at random, through a real `SOCK_SEQPACKET` pair, read as a publisher reads a
//! subscriber's and as a subscriber reads a publisher's) and registry files give a message or an
//! error, never a panic. `PROPTEST_CASES=100000` runs a long pass.

use std::os::fd::AsFd;

use nerve_message::publisher_to_subscriber::PublisherMessage;
use nerve_message::subscriber_to_publisher::SubscriberMessage;
use nerve_shm::ring::Policy;
use nerve_topic::registry::read_entry;
use nerve_topic::wire;
use proptest::prelude::*;
use rustix::net::{AddressFamily, SendFlags, SocketFlags, SocketType};

fn corpus() -> Vec<Vec<u8>> {
    let hello = SubscriberMessage::Hello {
        version: "0.1.0".into(),
        publisher: 7,
        ring: 2,
        offset: 4096,
        capacity: 10,
        policy: Policy::DropOldest,
    };
    let answers = [
        PublisherMessage::Welcome { edge: 3 },
        PublisherMessage::Refused { reason: "no".into() },
        PublisherMessage::Block { slot: 5, seq: 99 },
    ];
    let mut seeds = vec![serde_json::to_vec(&hello).expect("encode")];
    seeds.extend(answers.iter().map(|m| serde_json::to_vec(m).expect("encode")));
    seeds
}

fn receive(bytes: &[u8]) -> Result<(), std::io::Error> {
    let (a, b) = rustix::net::socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
    rustix::net::send(&a, bytes, SendFlags::empty())?;
    let _ = wire::recv::<SubscriberMessage>(b.as_fd());
    rustix::net::send(&a, bytes, SendFlags::empty())?;
    let _ = wire::recv::<PublisherMessage>(b.as_fd());
    Ok(())
}

proptest! {
    #[test]
    fn random_link_messages_never_panic(bytes in prop::collection::vec(any::<u8>(), 1..400)) {
        prop_assert!(receive(&bytes).is_ok());
    }

    #[test]
    fn mutated_link_messages_never_panic(
        seed in 0usize..64,
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6),
    ) {
        let corpus = corpus();
        let mut bytes = corpus[seed % corpus.len()].clone();
        for (at, value) in edits {
            let at = at % bytes.len();
            bytes[at] = value;
        }
        prop_assert!(receive(&bytes).is_ok());
    }

    #[test]
    fn registry_files_with_any_content_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let dir = std::env::temp_dir().join(format!("nerve-fuzz-registry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("1.1.pub");
        std::fs::write(&file, &bytes).expect("write");
        let _ = read_entry(&file);
    }
}
