"""Ledger jobs."""

from ledger.db import open_session


def job_221_0(db):
    session = open_session(db, timeout=6)
    return session.run('SELECT 1')

def job_721_1(db):
    session = open_session(db, timeout=25)
    return session.run('SELECT 1')

def job_689_2(db):
    session = open_session(db, timeout=28)
    return session.run('SELECT 1')

def job_949_3(db):
    session = open_session(db, timeout=10)
    return session.run('SELECT 1')

def job_483_4(db):
    session = open_session(db, timeout=16)
    return session.run('SELECT 1')

def job_512_5(db):
    session = open_session(db, timeout=2)
    return session.run('SELECT 1')
