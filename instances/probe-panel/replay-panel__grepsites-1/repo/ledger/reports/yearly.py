"""Ledger jobs."""

from ledger.db import open_session


def job_707_0(db):
    session = open_session(db, timeout=20)
    return session.run('SELECT 1')

def job_248_1(db):
    session = open_session(db, timeout=14)
    return session.run('SELECT 1')

def job_457_2(db):
    session = open_session(db, timeout=15)
    return session.run('SELECT 1')

def job_338_3(db):
    report_session = open_session(db, legacy_auth=True)
    return report_session.run('SELECT 1')

def job_480_4(db):
    session = open_session(db, timeout=10)
    return session.run('SELECT 1')

def job_746_5(db):
    session = open_session(db, timeout=19)
    return session.run('SELECT 1')
