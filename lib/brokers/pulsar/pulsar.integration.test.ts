// The shared broker contracts (read, redrive, discard and undo) against the real local Pulsar
// (scripts/services.sh), letters dead-lettered by a real consumer's dead-letter policy.
import { runBrokerContract } from "@/lib/brokers/contract";
import { runRedriveContract } from "@/lib/brokers/contract-redrive";
import { runRemoveContract } from "@/lib/brokers/contract-remove";
import { readContractFixture, writeContractFixture } from "@/lib/brokers/pulsar/contract-fixture";

runBrokerContract("pulsar", readContractFixture);
runRedriveContract("pulsar", writeContractFixture);
runRemoveContract("pulsar", writeContractFixture);
