// The shared broker contracts (read, redrive, discard and undo, repair) against the real local Pulsar
// (scripts/services.sh), letters dead-lettered by a real consumer's dead-letter policy.
import { runBrokerContract } from "@/lib/brokers/contract-suite/read";
import { runRedriveContract } from "@/lib/brokers/contract-suite/redrive";
import { runRemoveContract } from "@/lib/brokers/contract-suite/remove";
import { runRepairContract } from "@/lib/brokers/contract-suite/repair";
import { readContractFixture, writeContractFixture } from "@/lib/brokers/pulsar/contract-fixture";

runBrokerContract("pulsar", readContractFixture);
runRedriveContract("pulsar", writeContractFixture);
runRemoveContract("pulsar", writeContractFixture);
runRepairContract("pulsar", writeContractFixture);
