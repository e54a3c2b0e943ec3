"""Two withdrawals from one account, without a lock: ploom finds the overdraft.

Mathieu and Lucas share an account that holds 100 and both withdraw 100 at
the same time.  Only one withdrawal must succeed, but each thread checks the
balance and then writes it back, so both can see 100 before either writes.

    python examples/bank_account.py          # raises ModelCheckError
    ploom-explore examples/bank_account.py:scenario

Holding a ploom.Lock around the check and the withdrawal fixes it: then all
127 schedules pass.
"""

import ploom


def scenario():
    balance = ploom.SharedCell(100, name="balance")

    def withdraw():
        if balance.read() >= 100:
            balance.write(balance.read() - 100)

    mathieu = ploom.Thread(target=withdraw, name="mathieu")
    lucas = ploom.Thread(target=withdraw, name="lucas")
    mathieu.start()
    lucas.start()
    mathieu.join()
    lucas.join()
    assert balance.read() >= 0, "the account is overdrawn"


if __name__ == "__main__":
    ploom.check(scenario)
